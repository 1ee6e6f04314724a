"""WG008 accumulator-store-index: storing into part of a WGMMA accumulator."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule
from wgmma_lsp.rules.base import doc_path

MESSAGE = "Non-trivial indexing on WGMMAAbstractAccumulatorRef is not supported for stores."


def fixes(finding: Finding, source: str) -> list[Fix]:
    return []  # the right rewrite depends on intent (jnp.where over the full value, or a view)


RULE = Rule(
    code="WG008",
    name="accumulator-store-index",
    summary="Stores into a WGMMA accumulator must write all of it: acc_ref[...] = value.",
    template=MESSAGE,
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: WGMMAAbstractAccumulatorRef._setitem",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(9,),
    table_message='`Non-trivial indexing on WGMMAAbstractAccumulatorRef is not supported for stores.`',
)

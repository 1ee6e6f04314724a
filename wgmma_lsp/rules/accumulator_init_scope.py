"""WG007 accumulator-init-scope: `plgpu.ACC.init(x)` given to `pl.run_scoped`."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.base import doc_path

MESSAGE = "Preinitialized WGMMAAccumulatorRef only supported in pl.run_state."

RULE = Rule(
    code="WG007",
    name="accumulator-init-scope",
    summary="plgpu.ACC.init(x) is only valid in pl.run_state, not in pl.run_scoped.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: WGMMAAccumulatorRef.get_ref_aval",
    doc_file=doc_path(__file__),
    catalog_rows=(10,),
    table_message='`Preinitialized WGMMAAccumulatorRef only supported in pl.run_state.`',
)

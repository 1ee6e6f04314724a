"""WG104 load-transposed-layout: Lane: `plgpu.load(ref, ..., layout=WGMMA_TRANSPOSED)` of a ref that
is not a transposed view."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Either both the ref and the value are transposed or neither is."

RULE = Rule(
    code="WG104",
    name="load-transposed-layout",
    apis=("plgpu.load",),
    summary="Lane: plgpu.load with a transposed register layout (WGMMA_TRANSPOSED) from a ref that is "
            "not a transposed view.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _get_lowering_rule (Lane)",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(100,),
)

"""WG079 tcgen05-same-dtype: Lane: tcgen05_mma operands of different element types."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG079",
    name="tcgen05-same-dtype",
    apis=("plgpu.tcgen05_mma",),
    summary="Lane: tcgen05_mma operands of different element types.",
    template="MMA requires A and B to have the same element type, got: {element_type2} and {element_type}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(58,),
)

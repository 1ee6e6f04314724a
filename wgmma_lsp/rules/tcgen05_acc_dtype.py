"""WG080 tcgen05-acc-dtype: Lane: the TMEM accumulator dtype a tcgen05 MMA allows for its operands."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG080",
    name="tcgen05-acc-dtype",
    apis=("plgpu.tcgen05_mma",),
    summary="Lane: the TMEM accumulator dtype a tcgen05 MMA allows for its operands.",
    template="MMA with element type {element_type} only supports accumulators of type f32, but got: {d.dtype}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    table_message="`MMA with element type {element_type} only supports accumulators of type f32, but got: {d.dtype}` (or `f32 or f16`)",
    doc_file=doc_path(__file__),
    catalog_rows=(57,),
)

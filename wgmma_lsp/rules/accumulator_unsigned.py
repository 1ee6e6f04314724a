"""WG028 accumulator-unsigned: a WGMMA accumulator with an unsigned integer dtype."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG028",
    name="accumulator-unsigned",
    apis=("plgpu.ACC",),
    summary="WGMMA accumulators are never unsigned: int8 WGMMA accumulates in (signed) int32.",
    template="Invalid WGMMA accumulator dtype for s8/i8 WGMMA. Expected signed integer, but got {aval.dtype}.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _run_scoped_lowering_rule",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(24,),
    semantics=("lane", "warpgroup"),
)

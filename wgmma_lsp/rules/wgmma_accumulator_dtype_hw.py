"""WG011 wgmma-accumulator-dtype-hw: an accumulator dtype the WGMMA instruction does not support."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, text_of


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Allocate the accumulator with the dtype the operands need (float32, or int32 for int8
    operands): rewrite the dtype of `X.ACC(shape, dtype)`."""
    d = finding.data
    needed = d.get("needed", "float32")
    span, jnp = d.get("alloc_span"), d.get("jnp")
    if span is None or not jnp:
        return []
    parsed = parse_call(text_of(source, span))
    if parsed is None or len(parsed[0].args) != 2 or parsed[0].keywords:
        return []
    node, text = parsed
    func = ast.get_source_segment(text, node.func)
    shape = ast.get_source_segment(text, node.args[0])
    return [Fix(f"Accumulate in {needed}", (TextEdit(span, f"{func}({shape}, {jnp}.{needed})"),), True)]


RULE = Rule(
    code="WG011",
    name="wgmma-accumulator-dtype-hw",
    apis=("plgpu.wgmma", "plgpu.ACC"),
    summary="bf16/f32 WGMMA accumulates in f32 only; f16/fp8 WGMMA in f32 or f16; int8 in s32.",
    template="WGMMA with element type {element_type} only supports accumulators of type {types}, but got: {acc_dtype}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma; the mosaic_gpu.wgmma op verifier (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(21, 22, 23),
    table_message='`WGMMA with element type bf16 only supports accumulators of type f32, but got: f16`',
    fix_summary='accumulate in float32 (int32 for int8)',
    semantics=("lane", "warpgroup"),
)

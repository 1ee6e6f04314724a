"""WG005 wgmma-shapes: the accumulator and operand shapes of `plgpu.wgmma` do not chain."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import text_of


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Allocate the accumulator with the (M, N) the operands give: rewrite the shape of the
    `plgpu.ACC(shape, ...)` that made it (not preferred: the operands may be what is wrong)."""
    span, shape = finding.data.get("alloc_span"), finding.data.get("needed_shape")
    if span is None or shape is None:
        return []
    text = text_of(source, span)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "ACC" \
            or not node.args or "\n" in text:
        return []
    arg = node.args[0]
    start = span.col + arg.col_offset
    end = span.col + (arg.end_col_offset or arg.col_offset)
    from wgmma_lsp.spans import Span

    new = f"({shape[0]}, {shape[1]})"
    return [Fix(f"Allocate the accumulator as {new}, the shape the operands give",
                (TextEdit(Span(span.line, start, span.line, end), new),), False)]

RULE = Rule(
    code="WG005",
    name="wgmma-shapes",
    apis=("plgpu.wgmma",),
    summary="plgpu.wgmma needs acc (M, N), lhs (M, K) and rhs (K, N).",
    template="Incompatible shapes for matrix multiplication: lhs={a.shape}, rhs={b.shape=}, acc={acc.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(1,),
    fix_summary="allocate the accumulator with the operands' (M, N)",
    table_message='`Incompatible shapes for matrix multiplication: lhs=…, rhs=b.shape=…, acc=…`',
)

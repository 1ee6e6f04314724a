"""The fix for SMEM operands that lack the tiling and swizzle WGMMA needs: add the transforms
`plgpu.find_swizzle` picks to the allocation or BlockSpec (`plgpu.SMEM(...)`, `plgpu.BlockSpec(...)`)."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.fixes_common import text_of
from wgmma_lsp.spans import Span


def _pos(span: Span, text: str, lineno: int, col: int) -> tuple[int, int]:
    """A position inside `text` (the source of `span`) as a document position."""
    line_text = text.splitlines()[lineno - 1]
    col = len(line_text.encode("utf-8")[:col].decode("utf-8", "replace"))
    return (span.line + lineno - 1, (span.col if lineno == 1 else 0) + col)


def add_transforms_fix(finding, source: str) -> list[Fix]:
    d = finding.data
    span, swizzle, itemsize, plgpu = d.get("spec_span"), d.get("swizzle"), d.get("itemsize"), d.get("plgpu")
    if span is None or swizzle not in (32, 64, 128) or not itemsize or not plgpu:
        return []
    text = text_of(source, span)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call):
        return []
    value = (f"({plgpu}.TilingTransform((8, {swizzle // itemsize})), "
             f"{plgpu}.SwizzleTransform({swizzle}))")
    title = f"Tile and swizzle the {d.get('side', 'operand')} ({swizzle}-byte swizzle, as plgpu.find_swizzle picks)"
    kw = next((k for k in node.keywords if k.arg == "transforms"), None)
    if kw is not None:
        v = kw.value
        start = _pos(span, text, v.lineno, v.col_offset)
        end = _pos(span, text, v.end_lineno or v.lineno, v.end_col_offset or v.col_offset)
        return [Fix(title, (TextEdit(Span(*start, *end), value),), True)]
    if any(k.arg is None for k in node.keywords):
        return []  # **kwargs might already hold transforms
    # Insert before the closing parenthesis.
    close = Span(span.end_line, span.end_col - 1, span.end_line, span.end_col - 1)
    before = text[:-1].rstrip()
    sep = "" if before.endswith(("(", ",")) else ", "
    if before.endswith(","):
        sep = " "
    return [Fix(title, (TextEdit(close, f"{sep}transforms={value}"),), True)]

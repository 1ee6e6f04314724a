"""Small helpers the rules' fixes share: reading and rewriting expression text."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.spans import LineIndex, Span


_last_index: tuple[str, LineIndex] | None = None


def text_of(source: str, span: Span) -> str:
    """The source text of a span (the line index of the last source is kept)."""
    global _last_index
    index = _last_index
    if index is None or index[0] is not source:
        index = _last_index = (source, LineIndex(source))
    return index[1].text(span)


def needs_parens(expr_text: str) -> bool:
    """Would `expr_text.method()` bind to less than the whole expression?"""
    try:
        node = ast.parse(expr_text.strip(), mode="eval").body
    except SyntaxError:
        return True
    return not isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant,
                                 ast.List, ast.Tuple, ast.Dict))


def method_call(expr_text: str, call: str) -> str:
    base = f"({expr_text})" if needs_parens(expr_text) else expr_text
    return f"{base}.{call}"


def replace(title: str, span: Span, new_text: str, preferred: bool = False) -> Fix:
    return Fix(title, (TextEdit(span, new_text),), preferred)


def parse_call(text: str) -> tuple[ast.Call, str] | None:
    """`text` parsed as one call expression (with the stripped text its offsets refer to)."""
    stripped = text.strip()
    try:
        node = ast.parse(stripped, mode="eval").body
    except SyntaxError:
        return None
    return (node, stripped) if isinstance(node, ast.Call) else None

"""The call a fix leaves behind, for the fix's title (`= help: …` in `check`, the code action's
name in an editor): an API-move fix says what the corrected call reads in the installed JAX."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from wgmma_lsp.ide_model import TextEdit
from wgmma_lsp.spans import Span

#: Longest argument shown in full; longer ones read "…".
ARG_LIMIT = 40


def _line_starts(source: str) -> list[int]:
    starts, pos = [], 0
    for ln in source.splitlines(keepends=True):  # the lines LineIndex counts (code points)
        starts.append(pos)
        pos += len(ln)
    return starts + [pos]


def corrected_call(source: str, call: Span | None, edits: Sequence[TextEdit]) -> str | None:
    """The text of the call at `call` once `edits` (all inside it) are applied, on one line, long
    arguments shortened: `plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(…), ...)`. None when an
    edit falls outside the call or the result is not one call."""
    if call is None:
        return None
    starts = _line_starts(source)
    if max([call.end_line, *(e.span.end_line for e in edits)]) >= len(starts) - 1:
        return None

    def at(line: int, col: int) -> int:
        return starts[line] + col

    start, end = at(call.line, call.col), at(call.end_line, call.end_col)
    spans = []
    for e in edits:
        a, b = at(e.span.line, e.span.col), at(e.span.end_line, e.span.end_col)
        if a < start or b > end:
            return None
        spans.append((a, b, e.new_text))
    text = source[start:end]
    for a, b, new in sorted(spans, reverse=True):
        text = text[:a - start] + new + text[b - start:]
    try:
        node = ast.parse(text.strip(), mode="eval").body  # inside the call's parentheses: any layout, comments
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None

    def short(n: ast.expr) -> str:
        t = ast.unparse(n)
        if len(t) <= ARG_LIMIT:
            return t
        if isinstance(n, ast.Call):
            return f"{ast.unparse(n.func)}(…)"
        if isinstance(n, (ast.List, ast.Tuple)) and n.elts:
            inner = ", ".join(short(e) for e in n.elts)
            wrapped = f"[{inner}]" if isinstance(n, ast.List) else f"({inner}{',' if len(n.elts) == 1 else ''})"
            if len(wrapped) <= ARG_LIMIT:
                return wrapped
        return "…"

    args = [short(a) for a in node.args] + [f"{k.arg}={short(k.value)}" if k.arg else f"**{short(k.value)}"
                                            for k in node.keywords]
    return f"{ast.unparse(node.func)}({', '.join(args)})"

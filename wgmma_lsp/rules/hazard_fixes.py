"""The fix the run-time hazard rules (WG2xx) share: a synchronising statement inserted on its own
line before the statement that holds the racing access, at that statement's indentation."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.fixes_common import text_of
from wgmma_lsp.spans import Span

_parsed: tuple[str, ast.Module | None] | None = None


def _tree(source: str) -> ast.Module | None:
    global _parsed
    if _parsed is None or _parsed[0] is not source:
        try:
            tree: ast.Module | None = ast.parse(source)
        except SyntaxError:  # a half-typed file: its statements are not known, no fix offered
            tree = None
        _parsed = (source, tree)
    return _parsed[1]


def statement_start(source: str, line: int) -> tuple[int, str] | None:
    """(0-based line, indentation) of the innermost statement that holds `line` and starts a
    line of its own; None when there is none (a statement after `;` or a one-line `if x: ...`)."""
    tree = _tree(source)
    if tree is None:
        return None
    # The statements holding the line are nested in one another: the innermost starts last.
    holding = [n for n in ast.walk(tree)
               if isinstance(n, ast.stmt) and n.lineno - 1 <= line <= (n.end_lineno or n.lineno) - 1]
    if not holding:
        return None
    best = max(holding, key=lambda n: (n.lineno, n.col_offset))
    text = source.splitlines()[best.lineno - 1]
    indent = text[:best.col_offset]
    if indent.strip():
        return None
    return best.lineno - 1, indent


def insert_before(title: str, source: str, line: int, statement: str) -> list[Fix]:
    """Insert `statement` before the statement holding `line`."""
    at = statement_start(source, line)
    if at is None:
        return []
    row, indent = at
    return [Fix(title, (TextEdit(Span(row, 0, row, 0), f"{indent}{statement}\n"),), True)]


def insert_barrier_wait(data: dict, source: str, line: int) -> list[Fix]:
    """`<prefix>barrier_wait(<the copy's barrier, as spelled>)` inserted before the statement
    holding `line`: from a finding's `barrier_span` and `prefix` (the copy's), when the barrier is
    spelled on one line."""
    span, prefix = data.get("barrier_span"), data.get("prefix")
    if span is None or prefix is None:
        return []
    barrier = text_of(source, span).strip()
    if not barrier or "\n" in barrier:
        return []
    return insert_before(f"Wait on {barrier} first", source, line, f"{prefix}barrier_wait({barrier})")


def move_before(title: str, source: str, line: int, from_line: int) -> list[Fix]:
    """Move the one-line call statement at `from_line` (after `line`) to just before the
    statement holding `line`."""
    at, src = statement_start(source, line), statement_start(source, from_line)
    tree = _tree(source)
    if at is None or src is None or tree is None or src[0] <= at[0]:
        return []
    stmt = next((n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno - 1 == src[0]
                 and n.col_offset == len(src[1])), None)
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call) or stmt.end_lineno != stmt.lineno:
        return []
    text = source.splitlines()[src[0]].strip()
    return [Fix(title, (TextEdit(Span(at[0], 0, at[0], 0), f"{at[1]}{text}\n"),
                        TextEdit(Span(src[0], 0, src[0] + 1, 0), "")), True)]

"""Where a syntax error is reported (`syntax.py`): the span and line CPython's error names, or
the region a broken block covers."""

from __future__ import annotations

import ast

from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.spans import Span
from wgmma_lsp.syntax_text import _error_line, _indent, _next_code_line


def _blamed_line(err: BaseException, n_lines: int) -> int:
    """The line of the statement CPython's error says is broken (-1: it does not say): the line
    it names, or for a missing block the header's line (the line it names is the one after)."""
    if _pinned(err):
        return _error_line(err, n_lines)
    no_block = _NO_BLOCK.match(getattr(err, "msg", None) or "")
    return min(int(no_block.group(1)) - 1, n_lines - 1) if no_block is not None else -1


def _pinned(err: BaseException) -> bool:
    """Does CPython's error name a line of the statement that is broken (not the line after it,
    as "expected an indented block" does)? Only then is it taken as that statement's error."""
    msg = getattr(err, "msg", None) or ""
    return "was never closed" in msg or msg.startswith(_PINNED)


_PINNED = ("invalid syntax", "unexpected indent", "unindent does not match", "unmatched",
           "closing parenthesis", "unterminated", "expected ':'", "expected '('",
           # (a token or an expression of the statement itself)
           "invalid character", "invalid decimal literal", "positional argument follows",
           "expression cannot contain assignment", "unexpected character after line continuation",
           "f-string", "did you forget parentheses", "expected 'else' after 'if' expression")


def _past_the_end(err: BaseException, lines: list[str], end: int) -> Span | None:
    """An error CPython gives at the end of a text (lines [0, end) of the file parsed alone: a
    dedent or a decorator with nothing after it), blamed where the file goes on: its next token."""
    line = (getattr(err, "lineno", None) or 0) - 1
    offset = getattr(err, "offset", None)
    if not 0 <= line < end <= len(lines) or offset is None:
        return None
    if getattr(err, "end_offset", None) not in (-1, 0) or \
            offset - 1 < len(lines[line].rstrip()) and offset != 0:
        return None  # on a token of the text
    nxt = _next_code_line(lines, line + 1)
    return _token_span(lines, nxt) if nxt is not None and nxt >= end else None  # (not its last line)


_NO_BLOCK = LazyPattern(r"expected an indented block after .* on line (\d+)$")


def _missing_block_span(msg: str, lines: list[str]) -> Span | None:
    """For a header whose block is missing, where CPython blames it: the first token after the
    header (a statement parsed on its own ends at its header, so that token is found in the file)."""
    no_block = _NO_BLOCK.match(msg)
    if no_block is None:
        return None
    h = int(no_block.group(1)) - 1
    nxt = _next_code_line(lines, h + 1)
    if not 0 <= h < len(lines) or nxt is None or _indent(lines[nxt]) > _indent(lines[h]):
        return None
    return _token_span(lines, nxt)


def _token_span(lines: list[str], i: int) -> Span:
    """The first character of line `i`'s code."""
    col = _indent(lines[i])
    return Span(i, col, i, col + 1)


def _span_of(err: BaseException, lines: list[str]) -> Span:
    no_block = _missing_block_span(getattr(err, "msg", None) or "", lines)
    if no_block is not None:
        return no_block
    line = _error_line(err, len(lines))
    text = lines[line] if line < len(lines) else ""
    offset = getattr(err, "offset", None)
    col = min(max((offset or 1) - 1, 0), len(text))
    end_line = getattr(err, "end_lineno", None)
    end_offset = getattr(err, "end_offset", None)
    if end_line is not None and end_offset is not None and end_line - 1 == line and end_offset - 1 > col:
        return Span(line, col, line, min(end_offset - 1, len(text)))
    indent = _indent(text)
    return Span(line, min(col, len(text)), line, len(text)) if col < len(text) else Span(line, indent, line, len(text))


def _region_error(lines: list[str], a: int, b: int) -> tuple[Span, str]:
    """CPython's message for a broken region parsed on its own (small: linear in the region)."""
    chunk = lines[a:b + 1]
    indent = min((_indent(s) for s in chunk if s.strip()), default=0)
    text = "\n" * a + "\n".join(s[indent:] for s in chunk)  # CPython names the real lines
    msg = "invalid syntax"
    span = Span(a, indent, b, len(lines[b]) if b < len(lines) else 0)
    try:
        ast.parse(text)
    except SyntaxError as e:
        msg = e.msg or msg
        if e.lineno is not None:
            line = e.lineno - 1
            if a <= line <= b:
                col = indent + max((e.offset or 1) - 1, 0)
                ln = lines[line]
                if col >= len(ln):
                    col = _indent(ln)
                span = Span(line, col, line, len(ln))
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        line = lines[a]
        span = Span(a, _indent(line), b, len(lines[b]))
        msg = "invalid syntax here" if not _misindented_message(lines, a) else "unexpected indent"
    return _missing_block_span(msg, lines) or span, msg


def _misindented_message(lines: list[str], a: int) -> bool:
    return bool(lines[a]) and lines[a][0] in " \t"

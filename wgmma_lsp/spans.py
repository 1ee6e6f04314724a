"""Source positions shared by every layer: 0-based lines, columns in code points."""

from __future__ import annotations

import ast

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from wgmma_lsp.named_tuple import NamedTuple


class Span(NamedTuple):
    """A range in a document. Lines are 0-based; columns count Unicode code points.

    A named tuple: spans are made for every recorded expression, so they must be cheap."""

    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        if (line, col) < (self.line, self.col):
            return False
        return (line, col) <= (self.end_line, self.end_col)

    def overlaps(self, other: "Span") -> bool:
        return not ((self.end_line, self.end_col) < (other.line, other.col)
                    or (other.end_line, other.end_col) < (self.line, self.col))

    @property
    def size(self) -> tuple[int, int]:
        return (self.end_line - self.line, self.end_col - self.col)


class LineIndex:
    """Converts the UTF-8 byte columns that `ast` reports into code-point columns."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self._ascii = [ln.isascii() for ln in self.lines]
        self._may_yield: bool | None = None

    @property
    def may_yield(self) -> bool:
        """Whether the text spells `yield` anywhere: a file that does not has no generator
        function (asked once per text; most kernel files have none)."""
        if self._may_yield is None:
            self._may_yield = any("yield" in ln for ln in self.lines)
        return self._may_yield

    def col(self, line0: int, byte_col: int) -> int:
        if line0 >= len(self.lines) or self._ascii[line0]:
            return byte_col
        return len(self.lines[line0].encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        line = node.lineno - 1  # type: ignore[attr-defined]
        end_line = (getattr(node, "end_lineno", None) or node.lineno) - 1  # type: ignore[attr-defined]
        end_byte = getattr(node, "end_col_offset", None)
        if end_byte is None:
            end_byte = node.col_offset  # type: ignore[attr-defined]
        col = node.col_offset  # type: ignore[attr-defined]
        ascii_ = self._ascii
        if line >= len(ascii_) or not ascii_[line]:
            col = self.col(line, col)
        if end_line >= len(ascii_) or not ascii_[end_line]:
            end_byte = self.col(end_line, end_byte)
        return Span(line, col, end_line, end_byte)

    def text(self, span: Span) -> str:
        if span.line == span.end_line:
            return self.lines[span.line][span.col:span.end_col] if span.line < len(self.lines) else ""
        parts = [self.lines[span.line][span.col:]]
        parts.extend(self.lines[span.line + 1:span.end_line])
        parts.append(self.lines[span.end_line][:span.end_col])
        return "\n".join(parts)

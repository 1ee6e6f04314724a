"""Where code comes from when the interpreter runs code of more than one file.

The analysed document's spans are plain `Span`s. Code of the user's other modules (see
`wgmma_lsp.program`) runs in the same interpreter, but its spans are `ForeignSpan`s that name
their file, so a finding made there can be reported at the call site in the analysed document
with the other file's location as related information.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from wgmma_lsp.spans import LineIndex, Span


class ForeignSpan(Span):
    """A span in another file than the analysed document (`path`)."""

    path: str

    def __new__(cls, line: int, col: int, end_line: int, end_col: int, path: str) -> "ForeignSpan":
        self = super().__new__(cls, line, col, end_line, end_col)
        self.path = path
        return self

    def plain(self) -> Span:
        return Span(self.line, self.col, self.end_line, self.end_col)


@dataclass(eq=False)
class ModuleOrigin:
    """One of the user's modules whose code the interpreter may run."""

    path: str
    name: str  # dotted module name as imported, for messages
    lines: LineIndex
    volatile: set[str] = field(default_factory=set)  # names rebound with global/nonlocal

    def span(self, node: Any) -> ForeignSpan:
        s = self.lines.span(node)
        return ForeignSpan(s.line, s.col, s.end_line, s.end_col, self.path)


TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Importer(Protocol):
        """What the interpreter asks about imports the JAX import table does not know.

        Each returns None when the module is not one of the user's (then jedi's cache is asked)."""

        def import_from(self, from_path: str | None, module: str | None, level: int,
                        name: str) -> Any | None: ...

        def import_module(self, from_path: str | None, dotted: str) -> Any | None: ...

        def import_star(self, from_path: str | None, module: str | None,
                        level: int) -> tuple[dict[str, Any], list[str]] | None: ...


_active = threading.local()


def active_importer() -> Importer | None:
    """The import session of the analysis running on this thread (set by `wgmma_lsp.program`)."""
    return getattr(_active, "importer", None)


def set_active_importer(importer: Importer | None) -> Importer | None:
    previous = getattr(_active, "importer", None)
    _active.importer = importer
    return previous

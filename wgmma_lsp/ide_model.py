"""The IDE layer's output types. The server converts them to lsprotocol; the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from wgmma_lsp.spans import Span


class Severity(IntEnum):  # the LSP numbering
    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4


@dataclass(frozen=True)
class TextEdit:
    """Replace the text of a span."""
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A documented fix: a title and the edits that make JAX accept the code."""

    title: str
    edits: tuple[TextEdit, ...]
    preferred: bool = False


@dataclass
class RelatedInfo:
    """Another place a diagnostic points at."""
    span: Span
    message: str
    uri: str | None = None  # None: the same document


@dataclass
class Diagnostic:
    """One reported problem, editor-neutral."""
    code: str
    name: str
    message: str
    span: Span
    severity: Severity = Severity.ERROR
    source: str = "wgmma-lsp"
    doc_uri: str | None = None
    related: list[RelatedInfo] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)


@dataclass
class HoverInfo:
    """A hover: its Markdown and the span it is about."""
    markdown: str
    span: Span


@dataclass
class InlayHint:
    """A label shown inline at a position."""
    line: int
    col: int
    label: str
    tooltip: str = ""

"""The data an analysis produces, as the IDE features and the CLI read it: `Analysis`, with the
`ValueRecord`s of the values it saw and where it stopped short (`Incomplete`). A leaf: the
interpreter writes these, `analysis.analyze` (the composition root) returns them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from wgmma_lsp.rules.base import Finding
from wgmma_lsp.spans import LineIndex, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable


@dataclass
class ValueRecord:
    """The abstract value an expression had when the interpreter visited it."""

    span: Span
    kind: str  # "name", "expr", "call", "attr", "subscript"
    values: list[Any] = field(default_factory=list)
    name: str | None = None
    contexts: list[str | None] = field(default_factory=list)  # per value: the context's label


@dataclass(frozen=True)
class Incomplete:
    """Where and why the analysis stopped short of checking some code (reported as WG904)."""

    span: Span  # in the analysed document: the statement, expression or line it stopped at
    reason: str  # "budget", "file-budget", "too-deep", "internal-error", "too-large"
    message: str


@dataclass
class Analysis:
    """Everything the analysis of one document found."""
    source: str
    path: str | None
    findings: list[Finding] = field(default_factory=list)
    _records: dict[Span, ValueRecord] | None = None
    record_source: Callable[[], dict[Span, ValueRecord]] | None = None  # builds records lazily
    syntax_errors: list[tuple[Span, str]] = field(default_factory=list)
    note: str | None = None
    lines: LineIndex | None = None
    unresolved_imports: list[Any] = field(default_factory=list)  # for jedi, in the background
    cache: dict[str, Any] = field(default_factory=dict)  # derived results (the IDE layer's)
    modules: dict[str, str] = field(default_factory=dict)  # user modules read: path -> digest
    module_notes: list[str] = field(default_factory=list)  # what the program layer's bounds cut
    notes: list[tuple[Span, str]] = field(default_factory=list)  # what the budget left out
    smem: dict[Span, list[Any]] = field(default_factory=dict)  # kernel call -> KernelSmem per context
    # barrier allocation -> who arrives on it and who waits (hazards/barrier_uses.py)
    barriers: dict[Span, Any] = field(default_factory=dict)
    # Each configuration sweep run: (0-based line of its loop, combinations checked, in all).
    sweeps: list[tuple[int, int, int]] = field(default_factory=list)
    # Held while the records are built (the server builds them off its event loop, and two
    # requests may ask at once).
    _records_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # What the analysis could not check, and where it stopped (never a silent pass: WG904).
    incomplete: list[Incomplete] = field(default_factory=list)
    # Each kernel launched, and whether it was checked with concrete shapes (kernel_reach.py).
    kernels: list[Any] = field(default_factory=list)

    @property
    def records(self) -> dict[Span, ValueRecord]:
        """Recorded values by source span; built on first use (hovers), not on every keystroke."""
        if self._records is None:
            with self._records_lock:
                if self._records is None:
                    self._records = self.record_source() if self.record_source is not None else {}
                    self.record_source = None
        return self._records

    @property
    def records_built(self) -> bool:
        return self._records is not None

    @records.setter
    def records(self, value: dict[Span, ValueRecord]) -> None:
        self._records = value

    @classmethod
    def empty(cls, source: str, path: str | None = None, note: str | None = None) -> "Analysis":
        return cls(source=source, path=path, note=note)

    @classmethod
    def not_analysed(cls, source: str, path: str | None, reason: str, message: str) -> "Analysis":
        """A document not analysed at all (too large, say): one WG904 on its first line."""
        first = source.split("\n", 1)[0]
        return cls(source=source, path=path, note=message,
                   incomplete=[Incomplete(Span(0, 0, 0, len(first)), reason, message)])

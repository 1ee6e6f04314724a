"""The analysis of one document: parse, interpret, and keep what the IDE features need."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wgmma_lsp.rules.base import Finding
from wgmma_lsp.spans import LineIndex, Span


@dataclass
class ValueRecord:
    """The abstract value an expression had when the interpreter visited it."""

    span: Span
    kind: str  # "name", "expr", "call", "attr", "subscript"
    values: list[Any] = field(default_factory=list)
    name: str | None = None


@dataclass
class Analysis:
    source: str
    path: str | None
    findings: list[Finding] = field(default_factory=list)
    records: dict[Span, ValueRecord] = field(default_factory=dict)
    syntax_errors: list[tuple[Span, str]] = field(default_factory=list)
    note: str | None = None
    lines: LineIndex | None = None
    unresolved_imports: list[Any] = field(default_factory=list)  # for jedi, in the background

    @classmethod
    def empty(cls, source: str, path: str | None = None, note: str | None = None) -> "Analysis":
        return cls(source=source, path=path, note=note)


def analyze(source: str, path: str | None = None, resolve_with_jedi: bool = False) -> Analysis:
    from wgmma_lsp.interpret.driver import run

    return run(source, path, resolve_with_jedi)

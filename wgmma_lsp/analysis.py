"""The analysis of one document: parse, interpret, and keep what the IDE features need.

`analyze` is the composition root: it puts the program layer and the interpreter together. The
data it returns is defined in the leaf `analysis_types` (re-exported here)."""

from __future__ import annotations

import threading

from wgmma_lsp.analysis_types import Analysis, Incomplete, ValueRecord  # noqa: F401  (re-exported)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


def analyze(source: str, path: str | None = None, resolve_with_jedi: bool = False,
            program: Any = None, cancel: "threading.Event | None" = None) -> Analysis:
    """Analyse a document. Names it imports from the user's other modules are read through
    `program` (default: the process-wide `wgmma_lsp.program.default_program()`). `cancel` (set
    from another thread) abandons the analysis at its next checkpoint by raising
    `interpret.interp.Cancelled`."""
    from wgmma_lsp.interpret.driver import run
    from wgmma_lsp.program import default_program

    with (program or default_program()).session(path, source) as session:
        analysis = run(source, path, resolve_with_jedi, cancel)
    analysis.modules = dict(session.read)
    analysis.module_notes = list(session.notes)
    return analysis

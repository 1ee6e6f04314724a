"""`wgmma-lsp check --trace`: trace a file's entry points with JAX, from the command line."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.ide.model import Diagnostic
from wgmma_lsp.settings import Settings
from wgmma_lsp.entry.declared import all_entry_points
from wgmma_lsp.trace.report import dedupe_against_static, outcome_diagnostics
from wgmma_lsp.trace.runner import TraceOutcome, TraceRequest, run_trace


def request_for(path: Path | str, source: str, settings: Settings | None = None) -> TraceRequest | None:
    """The trace request for a file (None if it declares no entry point)."""
    settings = settings or Settings()
    path = Path(path).resolve()
    entries = all_entry_points(source, path)
    if not entries:
        return None
    return TraceRequest(path=str(path), source=source, entries=entries,
                        timeout=settings.trace_timeout, memory_mb=settings.trace_memory_mb,
                        interpreter=settings.trace_interpreter)


def trace_file(path: Path | str, source: str, settings: Settings | None = None) -> TraceOutcome | None:
    """Run the worker on a file's entry points and wait for it (None: no entry point)."""
    request = request_for(path, source, settings)
    return run_trace(request) if request is not None else None


def trace_diagnostics(path: Path, source: str, settings: Settings | None = None) -> list[Diagnostic]:
    """JAX's verdict on every entry point of a file, minus what the static engine already says.

    Runs the user's code in a subprocess: only call it when the user asked for trace mode.
    """
    outcome = trace_file(path, source, settings)
    if outcome is None:
        return []
    diags = outcome_diagnostics(outcome, settings)
    return dedupe_against_static(diags, _static(source, str(path), settings))


def _static(source: str, path: str, settings: Settings | None) -> list[Diagnostic]:
    try:
        from wgmma_lsp.analysis import analyze
        from wgmma_lsp.ide.diagnostics import diagnostics

        return diagnostics(analyze(source, path), settings)
    except Exception:  # the static engine is not trace mode's concern
        return []

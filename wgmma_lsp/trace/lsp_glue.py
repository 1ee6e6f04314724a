"""How the language server uses trace mode: runs on save, kills stale runs, feeds hovers and hints.

The server calls these hooks; they never raise and never import user code in-process: every
trace runs in a worker subprocess (`runner.TraceProcess`), one at a time per document and at
most `trace.concurrency` at once (the others wait for a slot, in a thread pool of their own so
that they never hold the event loop's default executor).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wgmma_lsp.trace.check import request_for
from wgmma_lsp.trace.report import (TracedAval, dedupe_against_static, hover_lines_for,
                                    inlay_labels_for, outcome_diagnostics, traced_avals)
from wgmma_lsp.trace.runner import TraceOutcome, TraceProcess, set_concurrency

if TYPE_CHECKING:  # pragma: no cover
    # The server as these hooks see it (the server imports this module, not the other way).
    from typing import Any as WgmmaLanguageServer

log = logging.getLogger("wgmma_lsp.trace")
#: Threads that wait for traces (most of them waiting for a slot: cheap).
_WAITERS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="wgmma-lsp-trace")


@dataclass
class TraceState:
    """Per-server trace-mode state: the running process and the last result of each document."""

    running: dict[str, TraceProcess] = field(default_factory=dict)
    outcomes: dict[str, TraceOutcome] = field(default_factory=dict)
    avals: dict[str, list[TracedAval]] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)  # the traced text, by line


def state(ls: "WgmmaLanguageServer") -> TraceState:
    st = getattr(ls, "_wgmma_trace_state", None)
    if st is None:
        st = TraceState()
        setattr(ls, "_wgmma_trace_state", st)
    return st


async def on_document_saved(ls: "WgmmaLanguageServer", uri: str) -> None:
    """Called after didOpen/didSave when `trace.enabled`; may update `ls.extra_diagnostics[uri]`."""
    try:
        await _trace(ls, uri)
    except Exception:  # never take the server down
        log.exception("trace mode failed for %s", uri)


async def _trace(ls: "WgmmaLanguageServer", uri: str) -> None:
    st = state(ls)
    old = st.running.pop(uri, None)
    if old is not None:
        old.kill()
    doc = ls.workspace.text_documents.get(uri)
    if doc is None or not doc.path:
        return
    source, version = doc.source, doc.version
    request = request_for(doc.path, source, ls.settings)
    if request is None:
        had = ls.extra_diagnostics.pop(uri, None)
        st.outcomes.pop(uri, None)
        st.avals.pop(uri, None)
        if had:
            await _refresh(ls, uri)
        return
    set_concurrency(ls.settings.trace_concurrency)
    proc = TraceProcess(request)
    st.running[uri] = proc
    loop = asyncio.get_running_loop()
    try:
        outcome = await loop.run_in_executor(_WAITERS, proc.wait)
    finally:
        if st.running.get(uri) is proc:
            del st.running[uri]
    if proc.cancelled or outcome.status == "cancelled":
        return
    current = ls.workspace.text_documents.get(uri)
    if current is None or current.version != version:
        return  # edited meanwhile: the result is stale
    log.info("trace of %s: %s in %.1f s (containment: %s)", uri, outcome.status, outcome.elapsed,
             outcome.containment)
    st.outcomes[uri] = outcome
    st.avals[uri] = traced_avals(outcome)
    st.lines[uri] = source.splitlines()
    diags = outcome_diagnostics(outcome, ls.settings)
    analysis = await ls.analysis_for(uri)
    if analysis is not None:
        from wgmma_lsp.ide.diagnostics import diagnostics as static_diagnostics

        diags = dedupe_against_static(diags, static_diagnostics(analysis, ls.settings))
    ls.extra_diagnostics[uri] = diags
    await _refresh(ls, uri)


async def _refresh(ls: "WgmmaLanguageServer", uri: str) -> None:
    await ls.refresh_diagnostics([uri], force=True)
    caps = getattr(ls, "client_capabilities", None)
    hints = getattr(getattr(caps, "workspace", None), "inlay_hint", None)
    if getattr(hints, "refresh_support", False):  # the traced avals changed
        try:
            ls.workspace_inlay_hint_refresh(None)
        except Exception:
            log.debug("inlay hint refresh failed", exc_info=True)


def on_document_changed(ls: "WgmmaLanguageServer", uri: str) -> None:
    """Called on every didChange/didClose: a running trace of that document is now stale."""
    try:
        proc = state(ls).running.pop(uri, None)
        if proc is not None:
            proc.kill()
    except Exception:
        log.exception("cannot stop the trace of %s", uri)


def _fresh_avals(ls: "WgmmaLanguageServer", uri: str, line: int) -> list[TracedAval]:
    """The traced avals of a document, if the line still reads as it did when it was traced."""
    st = state(ls)
    avals = st.avals.get(uri)
    traced = st.lines.get(uri)
    doc = ls.workspace.text_documents.get(uri)
    if not avals or traced is None or doc is None:
        return []
    now = doc.lines
    if not (line < len(traced) and line < len(now) and now[line].rstrip("\r\n") == traced[line]):
        return []
    return avals


def hover_lines(ls: "WgmmaLanguageServer", uri: str, line: int, col: int) -> list[str]:
    """Extra Markdown lines for a hover at (line, col), e.g. 'traced: `float32[128,256]`'."""
    try:
        return hover_lines_for(_fresh_avals(ls, uri, line), line, col)
    except Exception:
        log.exception("trace hover failed")
        return []


def inlay_labels(ls: "WgmmaLanguageServer", uri: str, line: int) -> list[tuple[int, str]]:
    """Extra inlay hints (column, label) for a line, from the traced jaxpr."""
    try:
        return inlay_labels_for(_fresh_avals(ls, uri, line), line)
    except Exception:
        log.exception("trace inlay hints failed")
        return []

"""The LSP shell: converts IDE results to lsprotocol, schedules analysis off the event loop.

Analysis runs in a dedicated worker pool (not pygls's `@server.thread` pool, which also reads
stdin). Every result is tagged with the document version it was computed for; a result for an
older version is dropped, and requests wait for the version they were asked about. The
analysis of one version, the entry holding it and the background pass that checks what the
typing budget left out: editor_analyses.py.
"""

from __future__ import annotations

import asyncio
import gc
import dataclasses
import functools
import logging
import os
import multiprocessing
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from wgmma_lsp import __version__, environment_lsp, gc_tuning, lifetime, transport, warmup
from wgmma_lsp import config as project_config
from wgmma_lsp.analysis import Analysis
from wgmma_lsp.editor_analyses import BackgroundPassMixin, Entry, safe_analyze
from wgmma_lsp.finished import STALE_NOTE, FinishedAnalyses, LineMap
from wgmma_lsp.lifecycle import Lifecycle
from wgmma_lsp.lsp_protocol import WgmmaProtocol
from wgmma_lsp.lsp_convert import to_lsp_diagnostic, to_lsp_signature_help, to_range
from wgmma_lsp.interpret import jedi_resolve
from wgmma_lsp.ide import code_actions as ide_actions
from wgmma_lsp.ide import diagnostics as ide_diagnostics
from wgmma_lsp.ide import hover as ide_hover
from wgmma_lsp.ide import inlay_hints as ide_inlay
from wgmma_lsp.ide import signature_help as ide_signature
from wgmma_lsp.ide.model import Diagnostic
from wgmma_lsp.program import lsp_glue as program_glue
from wgmma_lsp.rules.registry import find_rule
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span
from wgmma_lsp.trace import lsp_glue as trace_glue

log = logging.getLogger("wgmma_lsp")

EXPLAIN_COMMAND = "wgmma-lsp.explain"
DEBOUNCE_SECONDS = 0.015  # edits closer together than this are analysed once
# The start-up warm-up (warmup.py: ~0.4 s of CPU) waits this long after `initialized`, then for
# the analyses running by then: a document opened at start-up gets its diagnostics first,
# instead of sharing the interpreter lock with the warm-up.
WARMUP_DELAY_SECONDS = 0.5


class WgmmaLanguageServer(BackgroundPassMixin, LanguageServer):
    def __init__(self) -> None:
        super().__init__("wgmma-lsp", __version__, protocol_cls=WgmmaProtocol)
        self.settings = Settings()  # the editor's (wgmmaLsp section)
        self.editor_settings: dict[str, Any] = {}  # as the client sent them: applied on top of each file's configuration
        self.pool = ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1)),
                                       thread_name_prefix="wgmma-analysis")
        # Hover records (the hover pass) are built here, off the event loop and beside the
        # analyses: a hover on the last finished analysis never waits for a running one.
        self.records_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wgmma-records")
        self._jedi_pool: ProcessPoolExecutor | None = None
        self.entries: dict[str, Entry] = {}
        self.desynced: set[str] = set()  # documents dropped after a change that could not be read
        self.generations: dict[str, int] = {}  # uri -> bumped by every didOpen/didChange/didClose
        self._running: dict[str, "asyncio.Future[Any]"] = {}  # uri -> the analysis thread's job
        self._published: dict[str, tuple[int, Analysis | None]] = {}  # uri -> what was pushed last
        self.pull_diagnostics = False
        self.extra_diagnostics: dict[str, list[Diagnostic]] = {}  # e.g. trace mode's, by uri
        self.warmup: "asyncio.Future[None] | None" = None
        self.lifecycle = Lifecycle(known=lambda method: method in self.protocol.fm.builtin_features
                                   or method in self.protocol.fm.features)
        self.exit_code = 0  # `exit` without `shutdown`: 1
        self.finished = FinishedAnalyses()  # for hover and code actions while a newer one runs
        # The background pass's (editor_analyses.py): the tasks held until they end (`_keep`), and
        # the budgeted analyses (by id) whose left-out combinations are being checked
        # (`_check_the_rest`)
        self._background: set[asyncio.Future[Any]] = set()
        self._checking_the_rest: set[int] = set()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio with our own reader (`transport.py`): framing errors resynchronise,
        malformed messages are answered, over-large ones refused; end of input stops the server."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            reason = asyncio.run(transport.serve(self.protocol, stdin or sys.stdin.buffer,
                                                 self.protocol._send_data))
            log.info("stopping: %s", reason)
        except BrokenPipeError:
            log.error("the connection to the client is lost: stopping")
        except KeyboardInterrupt:
            pass
        except SystemExit as stop:  # pygls' `exit` handler: 0 after `shutdown`, else 1
            self.exit_code = stop.code if isinstance(stop.code, int) else 1
        finally:
            # Stopping: no garbage collection from here on — a full collection of a big
            # analysis's heap takes seconds, and the process is about to end anyway.
            gc.disable()
            self.cancel_all()
            self.close_pools()
            self.shutdown()

    def cancel_all(self) -> None:
        """Stopping: every analysis is abandoned at its next checkpoint, none waited for."""
        for entry in self.entries.values():
            entry.cancel.set()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.records_pool.shutdown(wait=False, cancel_futures=True)

    async def with_records(self, analysis: Analysis | None) -> Analysis | None:
        """`analysis`, its hover records built (the hover pass runs user code's contexts once more:
        up to a few hundred milliseconds on a library kernel) in a thread of their own, so that the
        server goes on reading and answering meanwhile."""
        if analysis is not None and not analysis.records_built:
            await asyncio.get_running_loop().run_in_executor(self.records_pool, lambda: analysis.records)
        return analysis

    async def warm_when_idle(self) -> None:
        """Warm up (parso's grammar, JAX's API facts, a frozen heap) once the documents opened
        at start-up are analysed."""
        await asyncio.sleep(WARMUP_DELAY_SECONDS)
        for _ in range(100):  # bounded: a stream of edits must not put it off for ever
            busy = [job for job in self._running.values() if not job.done()]
            if not busy:
                break
            await asyncio.wait(busy)
            await asyncio.sleep(DEBOUNCE_SECONDS * 2)  # a coalesced analysis may start next
        await asyncio.get_running_loop().run_in_executor(self.pool, warmup.warm)
        log.debug("warm-up done")

    # -- analysis scheduling ---------------------------------------------------------------
    def new_generation(self, uri: str) -> None:
        """The document changed (or was opened or closed): its running analysis is abandoned at
        its next checkpoint."""
        self.generations[uri] = self.generations.get(uri, 0) + 1
        entry = self.entries.get(uri)
        if entry is not None:
            entry.cancel.set()
            if not entry.task.done():
                entry.task.cancel()

    def desync(self, params: Any) -> None:
        """A didChange that could not be read: the server's copy of the document is no longer
        the editor's. Rather than answer from a wrong copy, the document is dropped (its
        diagnostics cleared) until the editor reopens it or sends its full text."""
        uri = params.get("textDocument", {}).get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str) or uri not in self.workspace.text_documents:
            return
        log.error("%s: a change could not be applied; the document is out of sync until it is "
                  "reopened or its full text is sent", uri)
        self.workspace.remove_text_document(uri)
        self.desynced.add(uri)
        self.new_generation(uri)
        self.forget(uri)
        if not self.pull_diagnostics:
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def generation(self, uri: str) -> int:
        return self.generations.get(uri, 0)

    def schedule(self, doc: TextDocument) -> "asyncio.Future[Analysis | None]":
        """The analysis task for the document's current generation."""
        generation = self.generation(doc.uri)
        entry = self.entries.get(doc.uri)
        if entry is not None and entry.generation == generation:
            return entry.task
        if entry is not None:
            entry.cancel.set()
            if not entry.task.done():
                entry.task.cancel()  # superseded: keystroke bursts coalesce into one analysis
        cancel = threading.Event()
        task = asyncio.ensure_future(self._analyse(doc.uri, generation, doc.source, doc.path, cancel))
        self.entries[doc.uri] = Entry(generation, task, cancel)
        return task

    async def _analyse(self, uri: str, generation: int, source: str, path: str | None,
                       cancel: threading.Event) -> Analysis | None:
        await asyncio.sleep(DEBOUNCE_SECONDS)
        running = self._running.get(uri)
        if running is not None and not running.done():
            # At most one analysis per document: the superseded one stops at its next checkpoint.
            await asyncio.wait([running])
        if cancel.is_set():
            raise asyncio.CancelledError()
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(self.pool, safe_analyze, source, path, cancel)
        self._running[uri] = job
        result = await asyncio.shield(job)
        if result is not None:
            self.finished.store(uri, generation, result)
        if cancel.is_set():
            raise asyncio.CancelledError()
        if result is not None and result.unresolved_imports and path:
            self._keep(asyncio.ensure_future(self._resolve_imports(uri, generation, source, path,
                                                                   list(result.unresolved_imports))))
        self._check_the_rest_later(uri, generation, source, path, result)
        return result

    @property
    def jedi_pool(self) -> ProcessPoolExecutor:
        """jedi runs in its own process: in a thread it would hold the interpreter lock for
        hundreds of milliseconds and delay hovers."""
        if self._jedi_pool is None:
            self._jedi_pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=lifetime.die_with_parent,
                                                  initargs=(os.getpid(),))
        return self._jedi_pool

    def close_pools(self) -> None:
        if self._jedi_pool is not None:
            self._jedi_pool.shutdown(wait=False, cancel_futures=True)
            self._jedi_pool = None

    async def warm_api_doc(self, name: str) -> None:
        if not jedi_resolve.needs_doc(name):
            return
        try:
            doc = await asyncio.get_running_loop().run_in_executor(
                self.jedi_pool, jedi_resolve.compute_doc, name)
        except Exception:
            log.debug("documentation lookup failed for %s", name, exc_info=True)
            return
        jedi_resolve.store_doc(name, doc)

    async def _resolve_imports(self, uri: str, generation: int, source: str, path: str,
                               pending: list) -> None:
        """jedi, in the background: when it learns what an import is, analyse again."""
        loop = asyncio.get_running_loop()
        todo = [p for p in pending if not jedi_resolve.cached(p.key)[0]]
        if not todo:
            return
        try:
            found = await loop.run_in_executor(self.jedi_pool, jedi_resolve.compute_imports,
                                               source, path, todo)
        except Exception:
            log.exception("import resolution failed for %s", uri)
            return
        learnt = jedi_resolve.store_imports(found)
        doc = self._open_document(uri)
        if not learnt or doc is None or self.generation(uri) != generation:
            return
        self.entries.pop(uri, None)
        await self.refresh_diagnostics([uri], force=True)

    async def refresh_diagnostics(self, uris: list[str], force: bool = False) -> None:
        """New diagnostics are ready: ask a pulling client to pull again, or push them (`force`:
        even if this version's were pushed already, because settings or other inputs changed)."""
        if self.pull_diagnostics:
            try:
                self.workspace_diagnostic_refresh(None)
            except Exception:  # the client may not support refresh
                log.debug("diagnostic refresh not supported", exc_info=True)
        else:
            for uri in uris:
                await self.publish(uri, force=force)

    async def analysis_for(self, uri: str) -> Analysis | None:
        """The analysis of the document's current version (None if never opened or failed)."""
        for _ in range(1000):
            doc = self._open_document(uri)
            if doc is None:
                return None
            generation = self.generation(uri)
            task = self.schedule(doc)
            try:
                result = await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.cancelled():
                    continue  # superseded by a newer version: wait for that one
                raise
            if self._open_document(uri) is None:
                return None
            if self.generation(uri) == generation:  # not changed meanwhile: the result is current
                return result
        return None

    async def answerable(self, uri: str) -> tuple[Analysis | None, LineMap | None]:
        """The analysis to answer a hover or code action from: the current version's if it is
        done, else the last finished one (with a map of its lines to the current text; None:
        it is of the current version), else the current version's once done."""
        doc = self._open_document(uri)
        if doc is None:
            return None, None
        task = self.schedule(doc)  # the newest version is analysed meanwhile
        last = self.finished.get(uri)
        if task.done() or last is None:
            return await self.analysis_for(uri), None
        if last.generation == self.generation(uri):
            return last.analysis, None
        return last.analysis, LineMap(last.analysis.source.splitlines(), doc.source.splitlines())

    def settings_for(self, uri: str) -> Settings:
        """The settings for one document: its project configuration (pyproject.toml
        `[tool.wgmma-lsp]` or wgmma-lsp.toml, found from its folder) with the editor's on top.
        Publish, pull, hover and code actions all read these: the diagnostics cached on an
        analysis (one per document version) are keyed by them, so the four share one entry."""
        path = _uri_path(uri)
        if path is None:
            return self.settings
        try:
            return project_config.settings_for(Path(path), editor=self.editor_settings)
        except project_config.ConfigError as e:
            log.warning("configuration ignored: %s", e)
            return self.settings

    def _open_document(self, uri: str) -> TextDocument | None:
        docs = self.workspace.text_documents
        return docs.get(uri)

    def diagnostics_for(self, analysis: Analysis, uri: str) -> list[lsp.Diagnostic]:
        """LSP diagnostics for a document, with positions in the client's units."""
        doc = self._open_document(uri)
        extra = ide_diagnostics.syntax_diagnostics(analysis) if self.settings.syntax_errors else []
        extra = extra + self.extra_diagnostics.get(uri, [])  # trace mode's
        # one pass over all of them: suppression comments apply to each
        diags = ide_diagnostics.diagnostics(analysis, self.settings_for(uri), extra=extra)
        out = [to_lsp_diagnostic(d, uri, doc) for d in diags]
        self._mark_checking_the_rest(analysis, out)
        return out

    async def publish(self, uri: str, force: bool = False) -> None:
        """Push the diagnostics of the document's settled version: once per version (every
        handler waiting for the same analysis publishes it once), never an older one."""
        analysis = await self.analysis_for(uri)
        doc = self._open_document(uri)
        if analysis is None or doc is None:
            return
        generation = self.generation(uri)
        last = self._published.get(uri)
        if last is not None and (last[0] > generation
                                 or (last[0] == generation and last[1] is analysis and not force)):
            return
        self._published[uri] = (generation, analysis)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, version=doc.version, diagnostics=self.diagnostics_for(analysis, uri)))

    def invalidate(self, uri: str) -> None:
        """The document's inputs changed (another module it imports, say) though its text did
        not: its analysis is abandoned and computed again when next asked for."""
        self.finished.forget(uri)  # not answered from, unmarked, as if it were current
        entry = self.entries.pop(uri, None)
        if entry is not None:
            entry.cancel.set()
            if not entry.task.done():
                entry.task.cancel()

    def forget(self, uri: str) -> None:
        """The document was closed."""
        entry = self.entries.pop(uri, None)
        if entry is not None:
            entry.cancel.set()
            if not entry.task.done():
                entry.task.cancel()
        self._published.pop(uri, None)
        self.finished.forget(uri)
        self._running.pop(uri, None)
        self.extra_diagnostics.pop(uri, None)


def _never_fail(default: Any = None):
    """A request handler that logs its exceptions and answers `default` instead of failing."""

    def deco(fn):
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("%s failed", fn.__name__)
                    return default() if callable(default) else default
            return run_async

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default() if callable(default) else default
        return run
    return deco


def _uri_path(uri: str) -> str | None:
    from pygls.uris import to_fs_path

    return to_fs_path(uri) if uri.startswith("file:") else None


def create_server() -> WgmmaLanguageServer:
    server = WgmmaLanguageServer()
    program_glue.attach(server)  # the user's other modules: overlays, watched files

    def server_pos(doc: TextDocument, pos: lsp.Position) -> tuple[int, int]:
        p = doc.position_codec.position_from_client_units(doc.lines, pos)
        return p.line, p.character

    async def refresh(uri: str) -> None:
        if server.pull_diagnostics:
            await server.analysis_for(uri)  # warm the cache for the coming pull
            return
        await server.publish(uri)

    async def refresh_and_trace(uri: str) -> None:
        """On open and save: static diagnostics, then (when enabled) JAX's own verdict."""
        await refresh(uri)
        if server.settings.trace_enabled:
            await trace_glue.on_document_saved(server, uri)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: WgmmaLanguageServer, params: None) -> None:
        ls.close_pools()

    @server.feature(lsp.INITIALIZE)
    @_never_fail(None)
    def initialize(ls: WgmmaLanguageServer, params: lsp.InitializeParams) -> None:
        caps = params.capabilities
        td = caps.text_document if caps else None
        ls.pull_diagnostics = bool(td and td.diagnostic)
        opts = params.initialization_options
        if isinstance(opts, dict):
            for key in ("wgmmaLsp", "settings"):  # helix and others wrap the section
                if isinstance(opts.get(key), dict):
                    opts = opts[key]
            ls.settings = Settings.from_dict(opts)
            ls.editor_settings = opts if isinstance(opts, dict) else {}
        # Whose JAX the facts are read from (environment.py), before any analysis
        ls.jax_environment = environment_lsp.EnvironmentState()
        ls.jax_environment.initialize(ls.settings.python, environment_lsp.workspace_roots(params))

    @server.feature(lsp.INITIALIZED)
    @_never_fail(None)
    async def initialized(ls: WgmmaLanguageServer, params: lsp.InitializedParams) -> None:
        # parso's grammar and JAX's API facts, then the heap is frozen: once start-up is analysed
        ls.warmup = asyncio.ensure_future(ls.warm_when_idle())
        program_glue.on_initialized(ls)
        await _load_configuration(ls)
        _announce_environment(ls)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @_never_fail(None)
    async def did_change_configuration(ls: WgmmaLanguageServer,
                                       params: lsp.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("wgmmaLsp"), dict):
            ls.settings = Settings.from_dict(settings["wgmmaLsp"])
            ls.editor_settings = settings["wgmmaLsp"]
        else:
            await _load_configuration(ls)
        _apply_log_level(ls.settings)
        _announce_environment(ls)
        await ls.refresh_diagnostics(list(ls.workspace.text_documents), force=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    @_never_fail(None)
    async def did_open(ls: WgmmaLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        await refresh_and_trace(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    @_never_fail(None)
    async def did_change(ls: WgmmaLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        trace_glue.on_document_changed(ls, params.text_document.uri)
        program_glue.on_document_changed(ls, params.text_document.uri)
        await refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    @_never_fail(None)
    async def did_save(ls: WgmmaLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        program_glue.on_document_changed(ls, params.text_document.uri)
        await refresh_and_trace(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    @_never_fail(None)
    def did_close(ls: WgmmaLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        trace_glue.on_document_changed(ls, uri)
        ls.forget(uri)
        program_glue.on_document_closed(ls, uri)
        if not ls.pull_diagnostics:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                    lsp.DiagnosticOptions(identifier="wgmma-lsp", inter_file_dependencies=True,
                                          workspace_diagnostics=False))
    @_never_fail(lambda: lsp.RelatedFullDocumentDiagnosticReport(items=[]))
    async def pull_diagnostic(ls: WgmmaLanguageServer, params: lsp.DocumentDiagnosticParams):
        analysis = await ls.analysis_for(params.text_document.uri)
        items = ls.diagnostics_for(analysis, params.text_document.uri) if analysis else []
        return lsp.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_never_fail(None)
    async def hover(ls: WgmmaLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis, stale = await ls.answerable(params.text_document.uri)
        analysis = await ls.with_records(analysis)
        doc = ls._open_document(params.text_document.uri)
        if analysis is None or doc is None:
            return None
        line, col = server_pos(doc, params.position)
        if stale is not None:  # answered from an earlier version: only where its line is the same
            new_line, line = line, stale.to_old(line)
            if line is None:
                return None
            info = ide_hover.hover(analysis, line, col, ls.settings_for(params.text_document.uri))
            span = stale.span_to_new(info.span) if info is not None else None
            return None if info is None else lsp.Hover(
                contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown,
                                           value=f"{info.markdown}\n\n{STALE_NOTE}"),
                range=to_range(span, doc) if span is not None and span.line == new_line else None)
        info = ide_hover.hover(analysis, line, col, ls.settings_for(params.text_document.uri),
                               api_doc=jedi_resolve.api_doc)
        for name in ide_hover.api_names_at(analysis, line, col):
            if jedi_resolve.api_doc(name) is None:  # look it up for the next hover
                asyncio.ensure_future(ls.warm_api_doc(name))
        extra = trace_glue.hover_lines(ls, params.text_document.uri, line, col) if ls.settings.trace_enabled else []
        if info is None and not extra:
            return None
        markdown = "\n\n".join([info.markdown, *extra] if info is not None else extra)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown),
                         range=to_range(info.span, doc) if info is not None else None)

    @server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                    lsp.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]))
    @_never_fail(None)
    async def signature_help(ls: WgmmaLanguageServer, params: lsp.SignatureHelpParams):
        uri = params.text_document.uri
        analysis, stale = await ls.answerable(uri)
        analysis, doc = await ls.with_records(analysis), ls._open_document(uri)
        info = doc and ide_signature.signature_help(doc.source, *server_pos(doc, params.position),
                                                    analysis, stale is None, ls.settings_for(uri))
        return to_lsp_signature_help(info) if info else None

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    @_never_fail(list)
    async def code_action(ls: WgmmaLanguageServer, params: lsp.CodeActionParams):
        uri = params.text_document.uri
        analysis, stale = await ls.answerable(uri)
        doc = ls._open_document(uri)
        if analysis is None or doc is None:
            return None
        start = server_pos(doc, params.range.start)
        end = server_pos(doc, params.range.end)
        wanted: Span | None = Span(*start, *end)
        if stale is not None and (wanted := stale.span_to_old(wanted)) is None:
            return []  # the lines asked about changed since the last finished analysis
        same = (lambda span: span) if stale is None else stale.span_to_new
        actions = []
        for diag, fix in ide_actions.code_actions(analysis, ls.settings_for(uri), wanted):
            spans = [same(e.span) for e in fix.edits]
            if stale is not None and (same(diag.span) is None or None in spans):
                continue  # an edit on a line that changed since: not offered
            if stale is not None:
                diag = dataclasses.replace(diag, span=same(diag.span), related=[])
            edits = [lsp.TextEdit(range=to_range(span, doc), new_text=e.new_text)
                     for span, e in zip(spans, fix.edits)]
            actions.append(lsp.CodeAction(
                title=fix.title, kind=lsp.CodeActionKind.QuickFix, is_preferred=fix.preferred,
                diagnostics=[to_lsp_diagnostic(diag, uri, doc)],
                edit=lsp.WorkspaceEdit(changes={uri: edits})))
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions())
    @_never_fail(list)
    async def inlay_hint(ls: WgmmaLanguageServer, params: lsp.InlayHintParams):
        if not ls.settings.inlay_hints:
            return []
        analysis = await ls.with_records(await ls.analysis_for(params.text_document.uri))
        doc = ls._open_document(params.text_document.uri)
        if analysis is None or doc is None:
            return []
        start = server_pos(doc, params.range.start)
        end = server_pos(doc, params.range.end)
        out = []
        for h in ide_inlay.inlay_hints(analysis, Span(*start, *end)):
            pos = to_range(Span(h.line, h.col, h.line, h.col), doc).start
            out.append(lsp.InlayHint(position=pos, label=h.label,
                                     kind=lsp.InlayHintKind.Type, padding_left=False,
                                     tooltip=h.tooltip or None))
        if ls.settings.trace_enabled:
            for line in range(start[0], end[0] + 1):
                for col, label in trace_glue.inlay_labels(ls, params.text_document.uri, line):
                    pos = to_range(Span(line, col, line, col), doc).start
                    out.append(lsp.InlayHint(position=pos, label=label, kind=lsp.InlayHintKind.Type))
        return out

    @server.command(EXPLAIN_COMMAND)
    @_never_fail(None)
    def explain(ls: WgmmaLanguageServer, *args: Any) -> Any:
        """`wgmma-lsp.explain CODE`: a rule's documentation, for the editor to show."""
        flat = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        rule = find_rule(str(flat[0])) if flat else None
        if rule is None:
            return {"error": f"unknown rule: {flat[0] if flat else '(none given)'}"}
        return {"code": rule.code, "name": rule.name, "markdown": rule.doc}

    return server


async def _load_configuration(ls: WgmmaLanguageServer) -> None:
    caps = ls.client_capabilities
    if not (caps and caps.workspace and caps.workspace.configuration):
        return
    try:
        result = await ls.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="wgmmaLsp")]))
    except Exception:
        log.debug("workspace/configuration failed", exc_info=True)
        return
    if result and isinstance(result[0], dict):
        ls.settings = Settings.from_dict(result[0])
        ls.editor_settings = result[0] if isinstance(result[0], dict) else {}
        _apply_log_level(ls.settings)


def _announce_environment(ls: WgmmaLanguageServer) -> None:
    """A changed `wgmmaLsp.python` switches environments; no JAX there is said once."""
    state = getattr(ls, "jax_environment", None)
    if state is None:
        return
    state.settings_changed(ls.settings.python)
    message = state.message()
    if message is not None:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))


def _apply_log_level(settings: Settings) -> None:
    level = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
             "error": logging.ERROR}.get(settings.log_level, logging.INFO)
    log.setLevel(level)


def configure_gc() -> None:
    """Analyses allocate many short-lived objects: collect young garbage less often, so that
    collector pauses do not land on hovers; freeze what start-up allocated. (The fuzz benchmark
    measures with the same settings.)"""
    gc_tuning.tune()


def serve_stdio() -> None:
    configure_gc()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = create_server()
    server.start_io()
    _exit_promptly([server.pool, server.records_pool], server.exit_code)


def _exit_promptly(pools: list[ThreadPoolExecutor], code: int, grace: float = 0.5) -> None:
    """End the process: an analysis thread that has not reached a checkpoint within `grace`
    seconds (or a hover pass still building records) is not waited for (Python would join it at
    exit: seconds on a big file)."""
    threads = [t for pool in pools for t in list(getattr(pool, "_threads", ()))]
    for thread in threads:
        thread.join(grace)
        grace = 0.05
    if any(t.is_alive() for t in threads):
        log.info("exiting without waiting for an analysis still running")
        logging.shutdown()
        if not sys.stdout.closed:  # pygls may have closed it at the end of input
            sys.stdout.flush()
        os._exit(code)
    if code:
        sys.exit(code)


__all__ = ["create_server", "serve_stdio"]

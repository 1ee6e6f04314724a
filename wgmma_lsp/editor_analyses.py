"""The server's analyses of each document: one version analysed with its project's
configuration, never failing (`safe_analyze`); the entry holding the analysis of each
generation of a document (`Entry`); and the background pass (`BackgroundPassMixin`): what the
typing budget left out (WG903: sweep combinations, test cases) checked once the document
settles, and the background tasks the server holds until they end.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgmma_lsp import config as project_config
from wgmma_lsp import environment
from wgmma_lsp.analysis import Analysis, analyze
from wgmma_lsp.ide import diagnostics as ide_diagnostics
from wgmma_lsp.interpret.incomplete import internal_error
from wgmma_lsp.interpret.interp import Cancelled
from wgmma_lsp.interpret.jax_version import lowering_default
from wgmma_lsp.interpret.sweep_budget import sweep_mode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from lsprotocol import types as lsp

log = logging.getLogger("wgmma_lsp")

MAX_SOURCE_CHARS = 5_000_000  # larger documents get a message instead of an analysis
# What the typing budget left out (WG903) is checked this long after the document's analysis,
# if no edit came meanwhile (`_check_the_rest`).
SETTLE_SECONDS = 0.4
CHECKING_THE_REST = " (checking them once typing stops)"  # said by a WG903 note meanwhile


@dataclass
class Entry:
    """The analysis of one generation of a document (see `documents.py`)."""

    generation: int
    task: "asyncio.Future[Analysis | None]"
    cancel: threading.Event


class BackgroundPassMixin:
    """The language server's background pass (`server.WgmmaLanguageServer`, whose state it reads:
    `entries`, `_running`, `pool`, `finished`, `generation`, `refresh_diagnostics`, and its own
    `_background` and `_checking_the_rest`, set up by the server's `__init__`)."""

    def _check_the_rest_later(self, uri: str, generation: int, source: str, path: str | None,
                              result: Analysis | None) -> None:
        """After the analysis `result` of a version: when the typing budget left something out
        (its WG903 notes) and the project chose no sweep mode, check the rest once the document
        settles (`_check_the_rest`)."""
        if result is not None and result.notes and _configured_sweeps(path) is None:
            self._checking_the_rest.add(id(result))  # (the callback below keeps `result` alive)
            task = asyncio.ensure_future(self._check_the_rest(uri, generation, source, path))
            task.add_done_callback(lambda _: self._checking_the_rest.discard(id(result)))
            self._keep(task)

    async def _check_the_rest(self, uri: str, generation: int, source: str, path: str | None) -> None:
        """What the typing budget left out (WG903: sweep combinations, test cases), checked once
        the document settles: the same version analysed again with every combination (the
        `wgmma-lsp check` mode), then published in place of the budgeted analysis. An edit,
        a close or an invalidation abandons it (it shares the budgeted analysis' cancel event);
        so does a newer analysis of the same version (jedi's imports: `entries` moved on)."""
        entry = self.entries.get(uri)
        if entry is None or entry.generation != generation:
            return
        await asyncio.sleep(SETTLE_SECONDS)
        if entry.cancel.is_set() or self.entries.get(uri) is not entry:
            return
        loop = asyncio.get_running_loop()
        job = loop.run_in_executor(self.pool, functools.partial(safe_analyze, sweeps="all"),
                                   source, path, entry.cancel)
        self._running[uri] = job  # (a newer version's analysis waits for it to stop)
        result = await asyncio.shield(job)
        if result is None or entry.cancel.is_set() or self.entries.get(uri) is not entry \
                or self.generation(uri) != generation:
            return
        log.info("%s: every sweep combination and test case checked in the background", uri)
        done: asyncio.Future[Analysis | None] = loop.create_future()
        done.set_result(result)
        self.entries[uri] = Entry(generation, done, entry.cancel)
        self.finished.store(uri, generation, result)
        await self.refresh_diagnostics([uri], force=True)

    def _keep(self, task: "asyncio.Future[Any]") -> None:
        """A background task held until it ends (the event loop keeps only weak references);
        what it raised is logged when it ends."""
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: "asyncio.Future[Any]") -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a background analysis failed", exc_info=task.exception())

    def _mark_checking_the_rest(self, analysis: Analysis, out: list[lsp.Diagnostic]) -> None:
        """While the rest of `analysis` is checked in the background, its WG903 notes say so."""
        if id(analysis) in self._checking_the_rest:  # (its WG903 notes: not for long)
            for d in out:
                if d.code == ide_diagnostics.NOTE_CODE:
                    d.message += CHECKING_THE_REST


def safe_analyze(source: str, path: str | None, cancel: threading.Event | None = None,
                  sweeps: str | None = None) -> Analysis | None:
    """The analysis of one version (None: cancelled); `sweeps` overrides the configuration's
    sweep mode (the background pass's "all")."""
    try:
        if len(source) > MAX_SOURCE_CHARS:
            log.warning("document too large to analyse (%d characters)", len(source))
            return Analysis.not_analysed(source, path, "too-large", f"analysis incomplete: file too large to "
                                         f"analyse ({len(source):,} characters, limit {MAX_SOURCE_CHARS:,})")
        other = environment.other_jax_note(path)
        if other is not None:
            return Analysis.not_analysed(source, path, "other-environment", other)
        cfg = _project_config(path)
        with lowering_default(cfg.lowering_semantics if cfg else None), \
                sweep_mode(sweeps or (cfg.sweeps if cfg else None)):
            return analyze(source, path, cancel=cancel)
    except Cancelled:
        return None
    except Exception as e:  # the server never dies on analysis bugs, nor hides them (WG904)
        log.exception("analysis failed for %s", path)
        return Analysis.not_analysed(source, path, "internal-error", internal_error(e))


def _configured_sweeps(path: str | None) -> str | None:
    """The sweep mode the project chose (None: the editor's default, the typing budget with the
    rest checked in the background once the document settles)."""
    cfg = _project_config(path)
    return cfg.sweeps if cfg else None


def _project_config(path: str | None) -> "project_config.Config | None":
    """The project configuration for a file: its `lowering-semantics` (None: JAX's default) and
    `sweeps` (None: the server's typing-speed budget) apply to the analysis."""
    if not path:
        return None
    try:
        return project_config.find(Path(path))
    except project_config.ConfigError:
        return None

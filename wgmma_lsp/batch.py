"""`wgmma-lsp check` over many files: read, pre-filter, analyse in parallel, collect.

Reading is honest (a file that cannot be read, is binary or is not valid text in its encoding
gets WG901 at its line; one that does not parse gets WG900), the pre-filter (`prefilter.py`)
spares the files that cannot use Pallas, and the rest are analysed on every core.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import sys
import time
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp import observed, results_cache
from wgmma_lsp.discovery import Found
from wgmma_lsp.ide.model import Diagnostic, Severity
from wgmma_lsp.results_cache import API
from wgmma_lsp.rules.tool_codes import SYNTAX_ERROR, UNREADABLE_FILE
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from concurrent.futures import Future

    from wgmma_lsp.prefilter import Prefilter


@dataclass
class FileResult:
    """What `check` found in one file."""
    path: Path  # as the user named it (or as found under a named folder)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    source: str | None = None  # the decoded text (None: unreadable)
    analysed: bool = False  # False: the pre-filter showed it cannot use Pallas
    crash: str | None = None  # the analysis itself failed (a bug in wgmma-lsp): its traceback
    incomplete: int = 0  # places the analysis stopped short (WG904), shown or ignored
    kernels: int = 0  # kernels the analysis saw launched (interpret/kernel_reach.py)
    without_shapes: int = 0  # of them, checked only with nothing known about their arguments
    budget_cut: int = 0  # sweeps / test parameter sets the analysis budget cut (WG903), shown or not


def tool_diagnostic(rule, message: str, span: Span, settings: Settings) -> Diagnostic | None:
    if not settings.rule_enabled(rule.code, rule.name):
        return None
    doc_uri = (f"{settings.docs_base_url}/{rule.code}" if settings.docs_base_url
               else (rule.doc_uri if rule.doc_file is not None else None))
    return Diagnostic(code=rule.code, name=rule.name, message=message, span=span,
                      severity=settings.severity_for(rule.code, rule.name, Severity.ERROR),
                      doc_uri=doc_uri)


def decode(data: bytes) -> tuple[str | None, tuple[Span, str] | None]:
    """The text of a Python file as Python reads it (PEP 263), or where and why it is not text."""
    nul = data.find(b"\0")
    if nul >= 0:
        return None, (_byte_span(data, nul), "binary file: it contains NUL bytes")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:  # an unknown encoding, a BOM that contradicts the cookie, or
        # undecodable bytes on the first two lines (then say where, below)
        if "unknown encoding" in str(e) or "encoding problem" in str(e):
            return None, (Span(0, 0, 0, 0), str(e))
        encoding = "utf-8"
    try:
        return data.decode(encoding), None
    except UnicodeDecodeError as e:
        bad = data[e.start:e.end][:4].hex(" ")
        return None, (_byte_span(data, e.start), f"cannot decode as {encoding}: {e.reason} (byte {bad})")
    except LookupError:
        return None, (Span(0, 0, 0, 0), f"unknown encoding: {encoding}")


def _byte_span(data: bytes, offset: int) -> Span:
    line = data.count(b"\n", 0, offset)
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", "replace"))
    return Span(line, col, line, col + 1)


def read(path: Path, settings: Settings) -> tuple[bytes | None, str | None, list[Diagnostic]]:
    """(bytes, text, WG901 diagnostics) for a file."""
    try:
        data = path.read_bytes()
    except OSError as e:
        d = tool_diagnostic(UNREADABLE_FILE, f"cannot read: {e.strerror or e}", Span(0, 0, 0, 0), settings)
        return None, None, [d] if d else []
    text, problem = decode(data)
    if problem is not None:
        d = tool_diagnostic(UNREADABLE_FILE, problem[1], problem[0], settings)
        return data, None, [d] if d else []
    return data, text, []


def check_source(path: str, source: str, settings: Settings, trace: bool = False,
                 stops: list | None = None, kernels: list | None = None) -> list[Diagnostic]:
    """Everything `check` reports for one readable file; `stops` gets the places the analysis
    stopped short at (analysis.Incomplete: WG904, whether shown or ignored)."""
    from wgmma_lsp.analysis import Analysis, analyze
    from wgmma_lsp.environment import other_jax_note
    from wgmma_lsp.ide.diagnostics import diagnostics, syntax_diagnostics
    from wgmma_lsp.interpret.jax_version import lowering_default
    from wgmma_lsp.interpret.sweep_budget import sweep_mode

    other = other_jax_note(path)  # installed with another JAX: not analysed with this one
    if other is not None:
        analysis = Analysis.not_analysed(source, path, "other-environment", other)
        if stops is not None:
            stops.extend(analysis.incomplete)
        return diagnostics(analysis, settings)
    with lowering_default(settings.lowering_semantics), sweep_mode(settings.sweeps):
        analysis = analyze(source, path)
        # jedi (slow) only for names imported from the user's modules that can hand the API on.
        pending = [p for p in analysis.unresolved_imports if _may_be_api(path, p.key.module, p.key.name)]
        if pending:
            from wgmma_lsp.interpret.jedi_resolve import resolve_imports  # (a file without any: not imported)

            if resolve_imports(source, path, pending):
                analysis = analyze(source, path)
    extra: list[Diagnostic] = []
    for syn in syntax_diagnostics(analysis):  # CPython's message, each broken region once
        d = tool_diagnostic(SYNTAX_ERROR, syn.message, syn.span, settings)
        if d is not None:
            extra.append(d)
    if trace:
        from wgmma_lsp.trace.check import trace_diagnostics

        extra.extend(trace_diagnostics(Path(path), source, settings))
    if stops is not None:
        stops.extend(analysis.incomplete)
    if kernels is not None:  # kernel_reach.KernelReach: which had concrete shapes
        kernels.extend(analysis.kernels)
        kernels.extend(None for _ in analysis.notes)  # WG903: a sweep cut by the budget
    return diagnostics(analysis, settings, extra=extra)


def syntax_only(path: str, source: str, settings: Settings) -> list[Diagnostic]:
    """WG900 for a file that is not analysed (it cannot use Pallas) but was named: does it parse?"""
    import ast

    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST)
        return []
    except (SyntaxError, ValueError):
        pass
    from wgmma_lsp.ide.suppressions import parse as suppressions_in
    from wgmma_lsp.syntax import parse

    silenced = suppressions_in(source)
    out = []
    for span, msg in parse(source).errors:
        sup = silenced.get(span.line)
        if sup is not None and (sup.codes is None or SYNTAX_ERROR.code in sup.codes):
            continue
        d = tool_diagnostic(SYNTAX_ERROR, f"SyntaxError: {msg}", span, settings)
        if d is not None:
            out.append(d)
    return out


_prefilter: Prefilter | None = None  # one per process: module facts are read once
_gc_tuned = False  # configure_gc() ran: the pool's parent freezes its warm heap before forking
_files_analysed = 0  # by this process, with the collector paused (see _collector_paused)


def configure_gc() -> None:
    """`check` allocates many short-lived objects and keeps a large heap (the modules it read,
    their summaries, JAX's facts): with Python's default thresholds the collector walked that heap
    again and again (about a quarter of the CPU of checking tokamax). As the server does
    (server.configure_gc): young garbage collected less often, what exists now frozen (never
    walked again). Only the CLI calls it: the collector's settings belong to the process."""
    global _gc_tuned
    from wgmma_lsp import gc_tuning

    gc_tuning.tune()
    _gc_tuned = True


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """In `wgmma-lsp check` (configure_gc ran), the cyclic garbage collector is off while a file
    is analysed and runs, when due, between files. An analysis is freed by reference counting
    when it ends (tests/test_analysis_garbage.py: no cycle keeps it), so a collection during it
    found next to nothing to free, and walked every object the analysis still used: about a
    tenth of the CPU of checking tokamax (young collections of the growing live analysis, and
    now and then of every object that survived them).

    The collector stays off until the next file starts (`check_files` turns it on again when
    its files are done). Then everything the last file's analysis allocated is young (nothing
    was collected meanwhile): one young collection frees the garbage it left in cycles (the
    scopes of the other modules it interpreted again), and what survives — the caches of
    modules, summaries and syntax trees the next files reuse — is frozen, never walked again.
    Left to the thresholds, that growing heap was walked by collections that came at random:
    when a run crossed the twentieth young collection, one walk of it cost 0.75 s (a check of
    tokamax with the documents' trees kept, kept_trees.py). A cache entry dropped later is freed by
    reference counting (trees and texts hold no cycles); the peak memory of a check of
    tokamax, jax, flax and optax in one process is unchanged (576 -> 579 MB)."""
    global _files_analysed
    if not _gc_tuned or not (gc.isenabled() or _files_analysed):
        yield
        return
    if _files_analysed:
        gc.collect(1)
        gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        _files_analysed += 1  # (the collector stays off until the next file, see above)


def _collector_resumed() -> None:
    """The files are done (in this process): the collector on again, as `configure_gc` set it."""
    if _gc_tuned and _files_analysed:
        gc.enable()


def _new_prefilter() -> Prefilter:
    from wgmma_lsp.prefilter import Prefilter  # not needed by a run the cache serves
    from wgmma_lsp.program import default_program

    return Prefilter(default_program().roots)  # (the roots the analyses import from)


def _may_be_api(path: str, module: str, name: str) -> bool:
    """Can `from module import name` in `path` bring in a JAX API object (prefilter.py)?"""
    global _prefilter
    if _prefilter is None:  # it reads from disk what it was not given: the same answers
        _prefilter = _new_prefilter()
    answer = _prefilter.may_export(os.path.abspath(path), module, name)
    observed.note(API, f"{path}\0{module}\0{name}", answer)  # the result cache asks again
    return answer


def _check_job(path: str, source: str, settings: Settings, trace: bool,
               cache: bool = False) -> tuple[list[Diagnostic], str | None, int, tuple[int, int, int]]:
    """check_source, with a crash of the analysis returned (not raised): the other files are
    still checked, and the run reports it. Last: the places the analysis stopped short at.
    `cache`: keep the result in the result cache (results_cache.py)."""
    with _collector_paused():
        return _check_one(path, source, settings, trace, cache)


def _check_one(path: str, source: str, settings: Settings, trace: bool,
               cache: bool) -> tuple[list[Diagnostic], str | None, int, tuple[int, int, int]]:
    try:
        stops: list = []
        kernels: list = []
        found = check_source(path, source, settings, trace, stops, kernels)
        cut = sum(k is None for k in kernels)
        kernels = [k for k in kernels if k is not None]
        counts = (len(kernels), sum(not k.concrete for k in kernels), cut)
        # (a file installed with another JAX: that environment's JAX is read outside
        # `observed`, so its verdict is not kept)
        if cache and not trace and not any(s.reason == "other-environment" for s in stops):
            results_cache.store(path, source, settings,
                                results_cache.Cached(found, len(stops), *counts))
        return found, None, len(stops), counts
    except Exception:  # a bug in wgmma-lsp, not in the user's file
        import traceback

        return [], traceback.format_exc(), 0, (0, 0, 0)


def kernels_summary(summary: str, results: Sequence[FileResult]) -> str:
    """The summary line, saying how many kernels were checked and how many only with nothing
    known about their arguments (no `__main__` driver, test or trace comment reached them)."""
    kernels = sum(r.kernels for r in results)
    without = sum(r.without_shapes for r in results)
    cut = sum(r.budget_cut for r in results)
    if cut:  # --sweeps budget, or test parameter sets past the cap: not every case was checked
        what = (f"{cut} sweep{'s' if cut != 1 else ''} checked in part: combinations were left out "
                f"(WG903 says why; `--sweeps all` checks every combination of a loop)")
        if summary == "All checks passed!":
            summary = f"No errors found, but {what}."
        elif summary.endswith("."):
            summary = f"{summary[:-1]}; {what}."
        else:
            summary = f"{summary} ({what})"
    if not without:
        return summary
    how = "add a '# wgmma-lsp: trace ...' comment for more checks, see docs/trace-mode.md"
    if summary == "All checks passed!":
        return (f"All checks passed! (checked {kernels} kernel{'s' if kernels != 1 else ''}; "
                f"{without} without concrete shapes: {how})")
    note = f"{without} kernel{'s' if without != 1 else ''} checked without concrete shapes: {how}"
    if summary.endswith("."):
        return f"{summary[:-1]}; {note}."
    return f"{summary} ({note})"


def incomplete_summary(summary: str, results: Sequence[FileResult]) -> str:
    """The summary line, saying how many files were not fully analysed (never "All checks
    passed!" for one of them, whether its WG904 notes are shown or ignored)."""
    import re

    n = sum(r.incomplete > 0 for r in results)
    if not n:
        return summary
    files = f"{n} file{'s were' if n != 1 else ' was'} not fully analysed (WG904)"
    if not any(d.severity in (Severity.ERROR, Severity.WARNING) for r in results for d in r.diagnostics):
        out, hit = re.subn(r"^(All checks passed!|Found \d+ notes? in \d+ files?\.)",
                           f"No errors found, but {files}.", summary)
    else:
        out, hit = re.subn(r"^(Found .*? in \d+ files?)\.", rf"\1; {files}.", summary)
    return out if hit else f"{summary} {files[0].upper()}{files[1:]}."


class Progress:
    """A one-line progress report on a terminal (nothing elsewhere)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled and total > 1
        self._last = 0.0

    def step(self, path: Path) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done == self.total):
            self._last = now
            sys.stderr.write(f"\r\x1b[K[{self.done}/{self.total}] {path}"[:200])
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_files(found: Sequence[Found], settings_for: Callable[[Path], Settings], *,
                trace: bool = False, jobs: int | None = None,
                progress: bool | None = None, prefilter: bool = True,
                cache: bool = False) -> list[FileResult]:
    """Check every file; results in the order given. `prefilter=False` analyses every file
    (what the pre-filter skips must make no difference: tests compare the two). `cache`: use
    and fill the result cache (results_cache.py; never with `trace`): the process records what
    it observes from here on (observed.py), for good; results are only written when it did from
    its start (`observed.start`; `wgmma-lsp check` starts it first thing)."""
    global _prefilter
    cache = cache and not trace
    keep = False
    if cache:
        keep = observed.start()
        results_cache.new_run()
    results = [FileResult(f.path) for f in found]
    _prefilter = None  # built when first asked (a run served from the cache may never ask)
    todo: list[tuple[int, Settings]] = []
    datas: list[tuple[Path, bytes]] = []
    for i, f in enumerate(found):
        settings = settings_for(f.path)
        data, text, problems = read(f.path, settings)
        results[i].source = text
        results[i].diagnostics = problems
        if data is not None:
            datas.append((f.path, data))
        if text is not None:
            todo.append((i, settings))
    if cache:  # before the pre-filter: what it skips makes no difference (see prefilter.py)
        todo = [(i, s) for i, s in todo if not _from_cache(results[i], s)]
    # One prefilter for the run: the import questions of each analysis (`_may_be_api`, also in
    # forked workers) reuse the files it read and the module graph it solved.
    if todo:
        _prefilter = _prefilter or _new_prefilter()
        for path, data in datas:
            _prefilter.add(path, data)
    # Files named on the command line are always analysed (a syntax error in them is reported);
    # in walked folders only those that can use Pallas (see prefilter.py).
    if prefilter and todo:
        cheap = _prefilter
        relevant = cheap.relevant(found[i].path for i, _ in todo)
        for i, settings in todo:  # named files that cannot use Pallas: still checked to parse
            if found[i].explicit and os.path.abspath(found[i].path) not in relevant:
                results[i].diagnostics += syntax_only(str(found[i].path), results[i].source or "", settings)
        todo = [(i, s) for i, s in todo if os.path.abspath(found[i].path) in relevant]
    jobs = jobs or default_jobs()
    bar = Progress(len(todo), sys.stderr.isatty() if progress is None else progress)
    try:
        if jobs <= 1 or len(todo) <= 1 or not _fork_is_safe():
            for i, settings in todo:
                r = results[i]
                found_diags, r.crash, r.incomplete, (r.kernels, r.without_shapes, r.budget_cut) = _check_job(
                    str(r.path), r.source or "", settings, trace, keep)
                r.diagnostics += found_diags
                r.analysed = True
                bar.step(r.path)
        else:
            _run_pool(results, todo, jobs, trace, bar, keep)
    finally:
        _collector_resumed()
        bar.close()
    if keep and todo:  # entries were (re)written: logs nobody refers to any more go
        results_cache.collect_garbage()
    return results


def _from_cache(r: FileResult, settings: Settings) -> bool:
    """Fill `r` from the result cache when its entry still holds."""
    hit = results_cache.load(str(r.path), r.source or "", settings, _may_be_api)
    if hit is None:
        return False
    r.diagnostics += hit.diagnostics
    r.incomplete, r.kernels, r.without_shapes, r.budget_cut = (
        hit.incomplete, hit.kernels, hit.without_shapes, hit.budget_cut)
    r.analysed = True
    return True


def _fork_is_safe() -> bool:
    """Can the worker pool fork this process? Workers are forked (they inherit the warmed
    analysis, the analysed environment and the run's settings). A fork copies the locks other
    threads hold at that instant: with other threads running, a worker could hang for good on a
    lock nobody will release. That is a host process embedding the checker — the test suite,
    with threads left by the server's tests, or with JAX imported (its threads are native ones
    `threading` does not see; JAX warns at every fork) — never `wgmma-lsp check` itself, which
    starts no thread and never imports JAX. There the files are checked in this process, one
    after the other: slower, never stuck."""
    import threading

    threads = threading.active_count()
    if threads == 1 and "jax" not in sys.modules:
        return True
    import logging  # (not imported by a run that forks)

    logging.getLogger("wgmma_lsp").info(
        "check: %d threads running in this process%s; files checked here, one at a time, not in "
        "forked workers", threads, " and JAX imported" if "jax" in sys.modules else "")
    return False


def _run_pool(results: list[FileResult], todo: list[tuple[int, Settings]], jobs: int,
              trace: bool, bar: Progress, cache: bool) -> None:
    # Imported here: a one-file run never starts a pool (multiprocessing costs ~10 ms to import).
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # Warm the analysis modules once in this process: forked workers inherit them.
    import wgmma_lsp.ide.diagnostics  # noqa: F401
    import wgmma_lsp.interpret.driver  # noqa: F401
    from wgmma_lsp.interpret import jax_facts

    # The installed JAX's facts too (read from the cache, or from JAX's source on a first run:
    # ~0.4 s of CPU each worker paid again), before the heap is frozen for the forks.
    try:
        jax_facts.current()
    except Exception as e:  # each worker reads them then, and reports what fails
        import logging  # (not imported by a run that forks)

        logging.getLogger("wgmma_lsp").info("check: JAX's facts not read before the workers "
                                            "start (%s: %s)", type(e).__name__, e)

    if _gc_tuned:  # what the warm-up and the pre-filter left: shared by the forks, never walked
        gc.freeze()
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx) as pool:
        pending: dict[Future, list[int]] = {
            pool.submit(_check_folder, [(str(results[i].path), results[i].source or "", s) for i, s in part],
                        trace, cache): [i for i, _ in part]
            for part in _by_folder(todo, results, jobs)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                for i, found in zip(pending.pop(fut), fut.result()):
                    r = results[i]
                    found_diags, r.crash, r.incomplete, (r.kernels, r.without_shapes, r.budget_cut) = found
                    r.diagnostics += found_diags
                    r.analysed = True
                    bar.step(r.path)


def _by_folder(todo: list[tuple[int, Settings]], results: list[FileResult],
               jobs: int) -> list[list[tuple[int, Settings]]]:
    """The pool's jobs: the files of one folder together, so that one worker reads, parses and
    interprets the modules they share (their package's, their tests') once, where files handed
    out one by one had each worker do it again (tokamax: ~3 s of CPU more with two workers than
    in one process). A folder larger than its share of the work (a `jobs`-th of the whole, cut
    in two) is split. Largest first, by source size: the pool is not left waiting on one big
    job at the end."""
    size = {i: len(results[i].source or "") for i, _ in todo}
    folders: dict[str, list[tuple[int, Settings]]] = {}
    for i, s in todo:
        folders.setdefault(os.path.dirname(os.path.abspath(results[i].path)), []).append((i, s))
    share = max(1, sum(size.values()) // (2 * max(1, jobs)))
    parts: list[list[tuple[int, Settings]]] = []
    for files in folders.values():
        files.sort(key=lambda t: -size[t[0]])
        part: list[tuple[int, Settings]] = []
        total = 0
        for f in files:
            if part and total + size[f[0]] > share:
                parts.append(part)
                part, total = [], 0
            part.append(f)
            total += size[f[0]]
        parts.append(part)
    parts.sort(key=lambda p: -sum(size[i] for i, _ in p))
    return parts


def _check_folder(files: list[tuple[str, str, Settings]], trace: bool,
                  cache: bool) -> list[tuple[list[Diagnostic], str | None, int, tuple[int, int, int]]]:
    """`_check_job` for each file of a pool's job (`_by_folder`), in order."""
    return [_check_job(path, source, settings, trace, cache) for path, source, settings in files]

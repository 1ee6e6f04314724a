"""Dropping an analysis frees it by reference counting: no reference cycle keeps the interpreter,
its syntax trees and values for the garbage collector, whose pause would land on a later keystroke
(hundreds of milliseconds once many analyses have piled up)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import interp as interp_module

SEED = Path(__file__).resolve().parent.parent / "examples" / "seed_errors.py"


def track_interpreters(monkeypatch: pytest.MonkeyPatch) -> list[weakref.ref]:
    """From now on, a weak reference to every interpreter made (to see whether one outlives its
    analysis)."""
    made: list[weakref.ref] = []
    real_init = interp_module.Interpreter.__init__

    def init(self, *a, **k):  # type: ignore[no-untyped-def]
        made.append(weakref.ref(self))
        real_init(self, *a, **k)

    monkeypatch.setattr(interp_module.Interpreter, "__init__", init)
    return made


def _garbage_after(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, bool]:
    """(objects only the collector could free, whether the interpreter outlived the analysis)."""
    made = track_interpreters(monkeypatch)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        analysis = analyze(source, str(SEED))
        diagnostics(analysis)
        assert analysis.records  # hovers were asked for: the lazy pass ran too
        del analysis
        alive = any(r() is not None for r in made)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        garbage = len(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
        if enabled:
            gc.enable()
    return garbage, alive


@pytest.mark.parametrize("broken", [False, True], ids=["clean", "syntax-error"])
def test_dropped_analysis_is_freed_without_the_collector(broken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    source = SEED.read_text()
    if broken:  # a syntax error in a kernel body: the repair path keeps the SyntaxError around
        lines = source.split("\n")
        k = next(i for i, ln in enumerate(lines) if ln.startswith("    ") and "=" in ln)
        lines[k] = lines[k] + " ("
        source = "\n".join(lines)
    analyze(source, str(SEED))  # warm caches (they are kept on purpose, not garbage)
    garbage, alive = _garbage_after(source, monkeypatch)
    assert not alive, "the interpreter is kept alive by a reference cycle"
    # A few cycles remain (parso's trees link parents and children); the analysis itself
    # (thousands of objects for this file) must not be among them.
    assert garbage < 500, garbage


def test_check_pauses_the_collector_while_a_file_is_analysed(monkeypatch: pytest.MonkeyPatch) -> None:
    """`wgmma-lsp check` (configure_gc ran) turns the collector off while a file is analysed
    (what it would walk is the live analysis, freed by reference counting when it ends) and
    leaves it off until the next file, which first collects the last one's garbage and freezes
    what survived; on again when the files are done (`check_files`), whatever the analysis did;
    a process embedding `check_files` keeps its own."""
    from wgmma_lsp import batch
    from wgmma_lsp.settings import Settings

    if not gc.isenabled():
        pytest.skip("the collector is off in this process")
    seen: list[bool] = []

    def check_source(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise RuntimeError("a bug in the analysis")
        return []
    monkeypatch.setattr(batch, "check_source", check_source)
    monkeypatch.setattr(batch, "_gc_tuned", True)
    monkeypatch.setattr(batch, "_files_analysed", 0)
    try:
        assert batch._check_job("x.py", "x = 1\n", Settings(), False)[1] is None
        assert not gc.isenabled()  # off until the next file
        crash = batch._check_job("x.py", "x = 1\n", Settings(), False)[1]
    finally:
        batch._collector_resumed()  # (what check_files does when its files are done)
    assert crash is not None and "a bug in the analysis" in crash
    assert seen == [False, False] and gc.isenabled()
    monkeypatch.setattr(batch, "_gc_tuned", False)
    batch._check_job("x.py", "x = 1\n", Settings(), False)
    assert seen[-1] is True

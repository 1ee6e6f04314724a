"""A newer document version cancels the analysis while the program layer interprets one of the
user's other modules: that is a cancellation, not the step budget running out. Nothing partial
is kept (no summary, no dependants), nothing is said (no budget log line, no note), the
cancellation reaches the caller at once, and the next analysis interprets the module again."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.interp import Cancelled
from wgmma_lsp.interpret.values import Const
from wgmma_lsp.program import Program
from wgmma_lsp.program import program as P


def make_project(root: Path) -> Path:
    (root / "outer.py").write_text("from inner import BASE\n\nSIZE = BASE * 2\n")
    (root / "inner.py").write_text("BASE = 64\n")
    main = root / "main.py"
    # Tiny on purpose: after the import the document's own interpreter reaches no checkpoint,
    # so only the imported module's interpreter can notice the cancellation.
    main.write_text("from outer import SIZE\n\nTOTAL = SIZE + 1\n")
    return main


def cancel_while_building(monkeypatch: pytest.MonkeyPatch, event: threading.Event, module: str) -> list[str]:
    """Set `event` as the program layer starts interpreting `module` (as a newer version would)."""
    built: list[str] = []
    original = P.Session._build

    def build(self: P.Session, path: str, name: str, text: P.Text) -> P.Summary:
        built.append(Path(path).name)
        if Path(path).name == module:
            event.set()
        return original(self, path, name, text)

    monkeypatch.setattr(P.Session, "_build", build)
    return built


def total(analysis) -> object:
    values = [v for span, r in analysis.records.items() if r.name == "TOTAL" for v in r.values]
    return values[0] if values else None


def test_cancelled_inside_an_imported_module_is_a_cancellation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    main = make_project(tmp_path)
    program = Program(roots=(str(tmp_path),))
    caplog.set_level(logging.INFO, logger="wgmma_lsp")
    event = threading.Event()
    built = cancel_while_building(monkeypatch, event, "inner.py")

    with pytest.raises(Cancelled):
        analyze(main.read_text(), str(main), program=program, cancel=event)
    assert built == ["outer.py", "inner.py"]
    # Nothing partial is kept: no summary (complete or cut), no count, no dependants.
    assert program._summaries == {}
    assert program.built == 0
    assert program.dependants(str(tmp_path / "inner.py")) == set()
    # Nothing is said: a cancellation is not the budget.
    assert not [r for r in caplog.records if "budget" in r.getMessage()]

    # The next version's analysis interprets both modules again, completely.
    built.clear()
    analysis = analyze(main.read_text(), str(main), program=program, cancel=threading.Event())
    assert built == ["outer.py", "inner.py"]
    assert program.built == 2
    assert all(s.complete for s in program._summaries.values()) and len(program._summaries) == 2
    assert analysis.module_notes == [] and analysis.notes == [] and analysis.note is None
    assert total(analysis) == Const(129)
    assert program.dependants(str(tmp_path / "inner.py")) == {str(main)}


def test_a_step_budget_spent_in_an_imported_module_is_still_a_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The other side: the budget itself running out stays what it was (incomplete, not cached)."""
    main = make_project(tmp_path)
    (tmp_path / "inner.py").write_text("BASE = 64\n" + "X = BASE\n" * 200)
    monkeypatch.setattr(P, "MODULE_STEPS", 50)
    program = Program(roots=(str(tmp_path),))
    caplog.set_level(logging.INFO, logger="wgmma_lsp")
    analysis = analyze(main.read_text(), str(main), program=program, cancel=threading.Event())
    assert any("step budget spent" in r.getMessage() for r in caplog.records)
    assert all((s.path, s.complete) != (str(tmp_path / "inner.py"), True) for s in program._summaries.values())
    assert str(tmp_path / "inner.py") in analysis.modules

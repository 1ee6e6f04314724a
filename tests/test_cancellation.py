"""A newer version cancels the running analysis at the interpreter's next checkpoint."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import interp_base
from wgmma_lsp.interpret.interp import Cancelled

SEED = (Path(__file__).resolve().parent.parent / "examples" / "seed_errors.py").read_text()


class SetAfter(threading.Event):
    """An event that reads as set from its n-th check on, counting the checks."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.checks = 0

    def is_set(self) -> bool:
        self.checks += 1
        return self.checks >= self.n


def test_cancel_stops_at_a_checkpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interp_base, "CHECK_EVERY", 50)
    event = SetAfter(3)
    with pytest.raises(Cancelled):
        analyze(SEED * 5, cancel=event)
    assert event.checks == 3  # stopped at the first checkpoint that saw it set


def test_an_uncancelled_analysis_is_unchanged() -> None:
    plain = analyze(SEED)
    event = threading.Event()
    checked = analyze(SEED, cancel=event)
    assert [f.message for f in plain.findings] == [f.message for f in checked.findings]


def test_a_set_event_cancels_before_interpreting() -> None:
    event = threading.Event()
    event.set()
    with pytest.raises(Cancelled):
        analyze(SEED, cancel=event)

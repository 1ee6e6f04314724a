"""Calls in silent passes are memoised for those only (interpret/silent_memo.py), and a call of
another module replays from its second equal call when its first run was clean
(interpret/foreign_memo.py, `memo.first_run_state`): a replay stands for a run only where nothing
could tell them apart, so the findings, notes and hover records are those of the analysis
without these replays, also when a budget runs out midway."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from test_foreign_memo import MAIN, OPS
from test_tuning_contexts import LIBRARY

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover_text import describe
from wgmma_lsp.interpret import foreign_memo, incomplete, interp_calls, memo, silent_memo
from wgmma_lsp.program import Program

# A provider past the unroll cap (driver.UNROLL_CAP): analysed with nothing known, its inner
# loops are joined, each running its body silently first; the helper it calls there defines a
# function of its own (`interp.defined` holds the last one made).
PROVIDER = '''\
def _smem_bytes(tile_m, stages):
  def per_stage(n):
    return n * 64 * 4
  return per_stage(tile_m) * stages


def get_autotuning_configs(ba) -> set[Config]:
  del ba
  configs = set()
  for tile_m in (64, 128):
    for tile_n in (64, 128):
      for stages in (1, 2, 3):
        for layout in Layout:
          for split in (1, 2):
            if _smem_bytes(tile_m, stages) <= 228 * 1024 and stages + split > 1:
              configs.add(Config(tile_m=tile_m, tile_n=tile_n, layout=layout))
  return configs
'''


def _source() -> str:
    start = LIBRARY.index("def get_autotuning_configs")
    end = LIBRARY.index("def matmul")
    return LIBRARY[:start] + PROVIDER + "\n\n" + LIBRARY[end:]


def _result(source: str) -> tuple:
    analysis = analyze(source, "library.py")
    found = sorted((d.span.line, d.code, d.message) for d in diagnostics(analysis))
    records = [(str(span), r.kind, r.name, [describe(v) for v in r.values], list(r.contexts))
               for span, r in analysis.records.items()]
    return found, [(str(i.span), i.reason) for i in analysis.incomplete], records


def _silent_replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    replay = silent_memo._replay

    def counted(interp, hit, func):  # type: ignore[no-untyped-def]
        seen.append(func.name)
        return replay(interp, hit, func)
    monkeypatch.setattr(silent_memo, "_replay", counted)
    return seen


def test_silent_replays_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source()
    with monkeypatch.context() as m:
        m.setattr(silent_memo, "ENABLED", False)
        plain = _result(source)
    replays = _silent_replays(monkeypatch)
    memoised = _result(source)
    assert "_smem_bytes" in replays  # the helper's later silent calls were replayed
    assert memoised == plain


@pytest.mark.parametrize("steps", [300, 600, 1000, 2000])
def test_a_budget_that_runs_out_midway_runs_out_at_the_same_step(monkeypatch: pytest.MonkeyPatch,
                                                                   steps: int) -> None:
    # A replay counts the steps of the run it stands for: a piece's budget runs out where it
    # does without the memo, with the same notes and records.
    source = _source()
    monkeypatch.setattr(incomplete, "piece_steps", lambda: steps)
    with monkeypatch.context() as m:
        m.setattr(silent_memo, "ENABLED", False)
        plain = _result(source)
    assert _result(source) == plain


def test_a_replay_waits_until_the_functions_its_run_defined_were_entered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # `per_stage` is defined by every run of `_smem_bytes`: a replay leaves `interp.defined`
    # holding an earlier run's function, which only the driver reads, for functions nobody
    # entered; so no replay is made before a recorded run entered it.
    checked: list[bool] = []
    original = silent_memo._replay

    def replay(interp, hit, func):  # type: ignore[no-untyped-def]
        checked.append(bool(hit.defined) and all(n in interp.entered for n in hit.defined))
        return original(interp, hit, func)
    monkeypatch.setattr(silent_memo, "_replay", replay)
    _result(_source())
    assert checked and all(checked)


# `tile(256)` twice, after `tile(128)`: its first run enters nothing new (nor stores, nor
# defines): it took the steps a second run would.
MAIN_TWICE = MAIN.replace("t = tile(256) + tile(256) + tile(256)", "t = tile(128) + tile(256) + tile(256)")


def _foreign(tmp_path: Path, clean_rule: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list[str]]:
    replays: list[str] = []
    original = interp_calls.CallsMixin._replay

    def counting(self, hit, func, call):  # type: ignore[no-untyped-def]
        if isinstance(hit, foreign_memo.ForeignEntry):
            replays.append(func.name)
        return original(self, hit, func, call)
    with monkeypatch.context() as m:
        m.setattr(interp_calls.CallsMixin, "_replay", counting)
        if not clean_rule:  # every first run taken as one that may cost more steps
            m.setattr(foreign_memo, "first_run_state", lambda interp: object())
        analysis = analyze(MAIN_TWICE, str(tmp_path / "main.py"), program=Program((str(tmp_path),)))
    found = sorted((d.span.line + 1, d.code, d.message, tuple(r.span.line for r in d.related))
                   for d in diagnostics(analysis))
    return found, replays


def test_a_clean_first_run_stands_for_the_second_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "ops.py").write_text(textwrap.dedent(OPS))
    third, replays_third = _foreign(tmp_path, False, monkeypatch)
    second, replays_second = _foreign(tmp_path, True, monkeypatch)
    assert second == third
    assert MAIN_TWICE != MAIN
    assert replays_third.count("tile") == 0  # (the third equal call would have been the first replay)
    assert replays_second.count("tile") == 1


def test_first_run_state_sees_what_makes_a_later_run_cheaper() -> None:
    class Interp:
        entered: set = set()
        memo: dict = {}
        defined: dict = {}
    interp = Interp()
    before = memo.first_run_state(interp)
    interp.memo = {"k": None}
    assert memo.first_run_state(interp) != before

"""The hover pass' own memo (interpret/hover_memo.py) changes no hover: a provider of autotuning
configs past the unroll cap is listed again in full by the hover pass, calling one helper with
the same arguments again and again; with the memo, the helper's later calls are replayed, and
the records (values, contexts, spans) are those of the hover pass without it, also when the
provider's listing runs out of its step budget midway."""

from __future__ import annotations

import pytest
from test_tuning_contexts import LIBRARY

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover_text import describe
from wgmma_lsp.interpret import hover_memo, incomplete
from wgmma_lsp.interpret.interp_calls import CallsMixin

PROVIDER = '''\
def _fits(tile_m):
  return tile_m * 64 * 4 <= 228 * 1024


def get_autotuning_configs(ba) -> set[Config]:
  del ba
  configs = set()
  for tile_m in (64, 128):
    for tile_n in (64, 128):
      for stages in (1, 2, 3):
        for layout in Layout:
          for split in (1, 2):
            if _fits(tile_m) and stages + split > 1:
              configs.add(Config(tile_m=tile_m, tile_n=tile_n, layout=layout))
  return configs
'''


def _source() -> str:
    start = LIBRARY.index("def get_autotuning_configs")
    end = LIBRARY.index("def matmul")
    return LIBRARY[:start] + PROVIDER + "\n\n" + LIBRARY[end:]


def _records(source: str) -> list[tuple]:
    analysis = analyze(source, "library.py")
    return [(str(span), r.kind, r.name, [describe(v) for v in r.values], list(r.contexts))
            for span, r in analysis.records.items()]


def _replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    replay = CallsMixin.memo_replay

    def counted(self, hit, func, call):  # type: ignore[no-untyped-def]
        if self.hover_only:
            seen.append(func.name)
        return replay(self, hit, func, call)
    monkeypatch.setattr(CallsMixin, "memo_replay", counted)
    return seen


def _without_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hover_memo, "applies", lambda interp, func: False)


def test_the_provider_is_past_the_cap() -> None:
    assert "get_autotuning_configs" in _source() and 2 * 2 * 3 * 2 * 2 > 16  # driver.UNROLL_CAP


def test_replays_in_the_hover_pass_change_no_record(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source()
    with monkeypatch.context() as m:
        _without_memo(m)
        plain = _records(source)
    replays = _replays(monkeypatch)
    memoised = _records(source)
    assert "_fits" in replays  # the helper's later calls were replayed
    assert memoised == plain
    assert any(r[2] == "tile" and r[3] for r in plain)  # (the else: branch hovers, from a tuning config)


@pytest.mark.parametrize("steps, cut", [(400, True), (1000, True), (3000, False)])
def test_a_budget_that_runs_out_midway_runs_out_at_the_same_step(monkeypatch: pytest.MonkeyPatch,
                                                                   steps: int, cut: bool) -> None:
    # The hover pass gives the provider's listing a piece's steps: few enough here that it stops
    # inside the nest. A replay counts the steps of the run it stands for, so it stops where the
    # hover pass without the memo stops, with the same records.
    source = _source()
    base = _records(source)
    monkeypatch.setattr(incomplete, "piece_steps", lambda: steps)
    with monkeypatch.context() as m:
        _without_memo(m)
        plain = _records(source)
    memoised = _records(source)
    assert memoised == plain
    # (the listing takes about 1,700 steps: cut at 400 and 1,000, the provider's own code has
    # fewer hovers)
    assert (len(plain) < len(base)) is cut

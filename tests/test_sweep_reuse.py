"""Configuration sweeps: a combination that repeats one already run is checked without running.

A sweep iteration is run with an observation log open (interpret/observe.py): the names of the
loop whose values it read. A later combination that agrees on those names, from the same state,
would repeat that run step for step; its context is added where the run left its own. These
tests pin down what counts as "the same": values read anywhere (even in one branch), values
carried from the previous iteration, and writes to objects made before the iteration.

The differential check against JAX is the fixture `fixtures/errors/entry_sweep_repeats.py`.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret import sweep_budget

FIXTURE = Path(__file__).parent / "fixtures" / "errors" / "entry_sweep_repeats.py"


def errors(src: str) -> list[str]:
    return [d.message for d in diagnostics(analyze(src, "k.py")) if d.severity == Severity.ERROR]


def notes(src: str) -> list[str]:
    return [d.message for d in diagnostics(analyze(src, "k.py")) if d.severity == Severity.INFORMATION]


@pytest.fixture
def one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep budget that lets only the first combination run."""
    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 1)


def test_every_combination_is_checked_with_two_runs() -> None:
    src = FIXTURE.read_text()
    analysis = analyze(src, str(FIXTURE))
    loop = src.splitlines().index(
        "  for tile_n, block_k, stages in itertools.product((128, 64), (32, 64, 128), (2, 4)):")
    assert analysis.sweeps == [(loop, 12, 12)]
    assert not analysis.notes  # nothing left out, nothing to say


def test_repeats_are_free_where_the_budget_allows_one_run(one_run: None) -> None:
    # The first run (tile_n=128) stands for the five other tile_n=128 combinations; the
    # tile_n=64 ones would need a run of their own, which the budget does not allow: said so.
    src = FIXTURE.read_text()
    analysis = analyze(src, str(FIXTURE))
    assert [(checked, total) for _, checked, total in analysis.sweeps] == [(6, 12)]
    assert notes(src) == ["checked 6 of 12 combinations of this sweep; the analysis budget "
                          "left out the others"]
    assert errors(src) == []  # the failing combinations are among those left out


def _with_kernel_body(body: str) -> str:
    src = FIXTURE.read_text()
    old = "    plgpu.wgmma(acc_ref, a_ref, b_ref)  # E: "
    start = src.index(old)
    end = src.index("\n", start)
    fixed = src.replace("plgpu.ACC((config.tile_m, 128), jnp.float32)",
                        "plgpu.ACC((config.tile_m, config.tile_n), jnp.float32)")
    return fixed[:start] + body + fixed[end:] if start < len(fixed) else fixed


SMEM_ACC = ("    pl.run_scoped(lambda smem: plgpu.wgmma(smem, a_ref, b_ref),\n"
            "                  plgpu.SMEM((config.tile_m, config.tile_n), jnp.float32))\n")


def test_a_value_read_in_one_branch_is_not_a_repeat(one_run: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 10_000)
    # Only `stages == 4` passes an SMEM ref as the accumulator. The run with stages=2 read
    # `stages` (in the test), so stages=4 is not a repeat of it: it runs, and the error names
    # exactly the six stages=4 contexts.
    src = _with_kernel_body("    plgpu.wgmma(acc_ref, a_ref, b_ref)\n    if config.stages == 4:\n"
                            + "\n".join("  " + ln for ln in SMEM_ACC.splitlines()) + "\n")
    msgs = errors(src)
    assert len(msgs) == 2, msgs  # one message per tile_n (the shapes differ)
    assert all(re.search(r"\(with tile_n=\d+, block_k=32, stages=4, from main\(\) at line \d+, "
                         r"and 2 other contexts\)$", m) for m in msgs), msgs


def test_a_value_carried_from_the_previous_iteration_is_compared(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 10_000)
    # `seen` counts iterations: the kernel is wrong on the third. Without comparing the carried
    # count, iterations 2 and 3 would look like repeats of the first (nothing else differs).
    src = FIXTURE.read_text().replace(
        "plgpu.ACC((config.tile_m, 128), jnp.float32)",
        "plgpu.SMEM((config.tile_m, config.tile_n), jnp.float32) if config.third "
        "else plgpu.ACC((config.tile_m, config.tile_n), jnp.float32)",
    ).replace("  stages: int\n", "  stages: int\n  third: bool = False\n").replace(
        "  for tile_n, block_k, stages in itertools.product((128, 64), (32, 64, 128), (2, 4)):\n"
        "    config = Config(tile_m=64, tile_n=tile_n, block_k=block_k, stages=stages)\n",
        "  seen = 0\n"
        "  for block_k in (32, 64, 128, 256):\n"
        "    tile_n, stages = 64, 2\n"
        "    seen += 1\n"
        "    config = Config(tile_m=64, tile_n=tile_n, block_k=block_k, stages=stages, "
        "third=seen == 3)\n")
    src = re.sub(r"  # E: .*", "", src)
    analysis = analyze(src, "k.py")
    msgs = [d.message for d in diagnostics(analysis) if d.severity == Severity.ERROR]
    assert len(msgs) == 1 and "(with block_k=128, from main()" in msgs[0], msgs
    assert [(c, t) for _, c, t in analysis.sweeps] == [(4, 4)]


def test_a_write_to_an_older_object_stops_the_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 10_000)
    # The count lives in an object made before the loop, not in a name the loop assigns: the
    # write to it is what makes the third iteration differ.
    src = FIXTURE.read_text().replace(
        "plgpu.ACC((config.tile_m, 128), jnp.float32)",
        "plgpu.SMEM((config.tile_m, config.tile_n), jnp.float32) if config.third "
        "else plgpu.ACC((config.tile_m, config.tile_n), jnp.float32)",
    ).replace("  stages: int\n", "  stages: int\n  third: bool = False\n").replace(
        "def main():\n",
        "class Counter:\n  def __init__(self):\n    self.n = 0\n\n\ndef main():\n  count = Counter()\n",
    ).replace(
        "  for tile_n, block_k, stages in itertools.product((128, 64), (32, 64, 128), (2, 4)):\n"
        "    config = Config(tile_m=64, tile_n=tile_n, block_k=block_k, stages=stages)\n",
        "  for block_k in (32, 64, 128, 256):\n"
        "    tile_n, stages = 64, 2\n"
        "    count.n = count.n + 1\n"
        "    config = Config(tile_m=64, tile_n=tile_n, block_k=block_k, stages=stages, "
        "third=count.n == 3)\n")
    src = re.sub(r"  # E: .*", "", src)
    msgs = errors(src)
    assert len(msgs) == 1 and "(with block_k=128, from main()" in msgs[0], msgs
def _hopper_source() -> str | None:
    spec = importlib.util.find_spec("jax")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "experimental" / "pallas" / "ops" / "gpu" / "hopper_matmul_mgpu.py"
    return path.read_text() if path.is_file() else None


def test_hopper_tuning_loop_with_a_budget_for_its_distinct_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """jax's hopper_matmul_mgpu.py sweeps 48 combinations; `grid_minor_dim` and
    `grid_tile_width` only reach `plgpu.planar_snake`, whose result does not depend on them, so
    9 runs check all 48 (8 distinct tile_m x tile_n x wg_dimension, and the first combination,
    which starts from `best_util = 0.0`). A mistake planted for tile_n=128 only is reported in
    the 24 contexts with tile_n=128, named."""
    src = _hopper_source()
    if src is None:
        pytest.skip("jax is not installed")
    acc = "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)"
    assert src.count(acc) == 1
    planted = src.replace(acc, "acc_ref=plgpu.ACC((tile_m, min(tile_n, 64)), jnp.float32)")
    with sweep_budget.sweep_mode("all"):  # as `wgmma-lsp check` does by default
        analysis = analyze(planted, "hopper_matmul_mgpu.py")
    sweep = [s for s in analysis.sweeps if s[2] == 48]
    assert [(c, t) for _, c, t in sweep] == [(48, 48)]
    diags = [d for d in diagnostics(analysis) if d.severity == Severity.ERROR]
    assert diags, "the planted mistake is reported"
    for d in diags:
        assert "tile_n=128" in d.message and "tile_n=64" not in d.message, d.message
        assert all("tile_n=128" in r.message for r in d.related if "proven in" in r.message)
    assert not [d for d in diagnostics(analyze(src, "hopper_matmul_mgpu.py"))
                if d.severity == Severity.ERROR]

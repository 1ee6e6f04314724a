"""The static race warnings (WG2xx) against JAX's own dynamic race detector.

Each hazard has fixtures in pairs under tests/fixtures/races: `racy/NAME.py` has a data race and a
`# R: WG2xx` comment on the line the analyzer must warn at; `fixed/NAME.py` is the same kernel
without the race. Ground truth is JAX's GPU interpret mode with `detect_races=True`, run on the
CPU in a fresh process (tests/race_oracle.py):

- the racy kernel races under the detector, and the warning sits on one of the two lines of a
  race JAX reports, its related location on the other (or, for a copy out still reading when
  the kernel ends, or a barrier phase lost, the run raises the error a `# race-detector-raises:`
  line names; a kernel whose wait never returns hangs: `# race-detector-raises: timeout`; where
  which of the two happens depends on how far one thread runs ahead, `# race-detector-or-raises:`
  accepts either);
- the fixed twin runs race-free under the detector and gets no WG2xx warning;
- the warning's quick fix, applied, gives a kernel the detector finds race-free (and whose
  output still equals the fixture's `expected()`, where it has one), with no WG2xx left.

A fixture's `# race-detector: >=0.12` line says that only jax 0.12's detector models its hazard
(0.10.2 copies SMEM to GMEM synchronously and treats commit_smem / wait_smem_to_gmem as no-ops):
on 0.10 the analyzer still warns (a race is a race on the GPU), and the detector's part is skipped.
`# race-detector: none`: no JAX's detector models it yet (a wgmma reading an operand a copy may
still be writing: the detector's `wgmma` has no vector clocks); the analyzer warns, and a test
checks that the detector is still blind there — the day it sees the race, the fixture moves to
`all` and is judged by it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.apply_fixes import apply_edits
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.rules.registry import RULES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from race_oracle import Detected, detect_many, detector_models, detector_raises, expected_warnings  # noqa: E402

RACES = Path(__file__).parent / "fixtures" / "races"
NAMES = sorted(p.stem for p in (RACES / "racy").glob("*.py"))
HANG_TIMEOUT = 60.0  # seconds a kernel that waits forever runs under the detector


def _modelled(source: str) -> bool:
    need = detector_models(source)
    version = installed()
    return need == "all" or (need == ">=0.12" and version is not None and version[:2] >= (0, 12))


def _skip_reason(source: str) -> str:
    if detector_models(source) == "none":
        return "no JAX's race detector models this hazard yet (test_the_detector_is_still_blind_there)"
    return (f"jax {'.'.join(map(str, installed() or ()))}'s race detector does not model this hazard "
            f"(the fixture needs {detector_models(source)}: asynchronous SMEM->GMEM copies, commit_smem)")


def _hazards(source: str, path: Path):
    return [d for d in diagnostics(analyze(source, str(path))) if d.code.startswith("WG2")]


def _fixed_by_quick_fix(name: str) -> str | None:
    """The racy fixture with the first quick fix of its warnings applied (None: none offered)."""
    path = RACES / "racy" / f"{name}.py"
    source = path.read_text()
    fixes = [f for d in _hazards(source, path) for f in d.fixes]
    return apply_edits(source, list(fixes[0].edits)) if fixes else None


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[Path, Detected]:
    """The detector's verdict on every fixture it models, and on every quick-fixed racy one, from
    one process (the kernels run one after the other)."""
    paths, hangs = [], []
    fixed_dir = tmp_path_factory.mktemp("quick_fixed")
    for name in NAMES:
        for kind in ("racy", "fixed"):
            path = RACES / kind / f"{name}.py"
            source = path.read_text()
            if _modelled(source):
                # a kernel that hangs runs alone, cut by a short timeout
                (hangs if kind == "racy" and detector_raises(source) == "timeout" else paths).append(path)
        quick = _fixed_by_quick_fix(name)
        if quick is not None and _modelled(quick):
            (fixed_dir / f"{name}.py").write_text(quick)
            paths.append(fixed_dir / f"{name}.py")
    out = detect_many(paths)
    for path in hangs:
        out.update(detect_many([path], timeout=HANG_TIMEOUT))
    out[Path("quick_fixed")] = Detected([], None, str(fixed_dir), None)
    return out


def test_there_are_enough_pairs() -> None:
    assert len(NAMES) >= 30
    assert all((RACES / "fixed" / f"{n}.py").exists() for n in NAMES)
    codes = {code for n in NAMES for _, code in expected_warnings((RACES / "racy" / f"{n}.py").read_text())}
    # every race rule (stage "hazard") has its fixtures, and every fixture's code is such a rule
    assert codes == {code for code, rule in RULES.items() if rule.stage == "hazard"}


@pytest.mark.parametrize("name", NAMES)
def test_racy_fixture(name: str, verdicts) -> None:
    path = RACES / "racy" / f"{name}.py"
    source = path.read_text()
    want = expected_warnings(source)
    assert want, "a racy fixture says where the warning goes (# R: WG2xx)"
    found = _hazards(source, path)
    assert {(d.span.line + 1, d.code) for d in found} == want
    assert all(d.severity.name == "WARNING" for d in found)
    if not _modelled(source):
        pytest.skip(_skip_reason(source))
    verdict = verdicts[path]
    raises = detector_raises(source)
    if raises is not None:  # not a race between two accesses: the run ends with the copy reading
        assert verdict.error is not None and raises in verdict.error, verdict.error
        return
    # `# race-detector-or-raises: <error>`: the thread that runs ahead may instead make the run stop
    # with this error (a producer that never waits completes a barrier phase the consumer has not
    # observed yet): then that error, else the race on our two lines.
    or_raises = re.search(r"^# race-detector-or-raises: (.+)$", source, re.M)
    if or_raises is not None and verdict.error is not None:
        assert or_raises.group(1).strip() in verdict.error, verdict.error
        return
    assert verdict.error is None, verdict.error
    assert verdict.found and verdict.races, verdict
    for d in found:
        assert d.related, d
        here, there = d.span.line + 1, d.related[0].span.line + 1
        assert any(here in race and there in race for race in verdict.races), (here, there, verdict.races)


BLIND = [n for n in NAMES if detector_models((RACES / "racy" / f"{n}.py").read_text()) == "none"]


@pytest.mark.parametrize("name", BLIND)
def test_the_detector_is_still_blind_there(name: str) -> None:
    """A `# race-detector: none` fixture runs race-free under the installed JAX's detector. When a
    JAX's detector learns to see the race, this fails: the fixture then says `all` (or the
    versions), and the detector judges the warning's lines as for every other race."""
    verdict = detect_many([RACES / "racy" / f"{name}.py"])[RACES / "racy" / f"{name}.py"]
    assert verdict.error is None, verdict.error
    assert verdict.found is False and verdict.races == [], verdict


@pytest.mark.parametrize("name", NAMES)
def test_fixed_twin(name: str, verdicts) -> None:
    path = RACES / "fixed" / f"{name}.py"
    source = path.read_text()
    assert _hazards(source, path) == []
    if not _modelled(source):
        pytest.skip(_skip_reason(source))
    verdict = verdicts[path]
    assert verdict.error is None, verdict.error
    assert verdict.found is False and verdict.races == [], verdict.races
    assert verdict.matches is not False


@pytest.mark.parametrize("name", NAMES)
def test_quick_fix_removes_the_race(name: str, verdicts) -> None:
    source = (RACES / "racy" / f"{name}.py").read_text()
    fixed = _fixed_by_quick_fix(name)
    if fixed is None:
        pytest.skip("no quick fix offered here (the later wait is in another function or before the access)")
    out = Path(verdicts[Path("quick_fixed")].error or "") / f"{name}.py"
    assert _hazards(fixed, out) == []
    if not _modelled(source):
        pytest.skip(_skip_reason(source))
    verdict = verdicts[out]
    assert verdict.error is None, verdict.error
    assert verdict.found is False and verdict.races == [], (fixed, verdict.races)
    assert verdict.matches is not False


def test_a_ref_handed_to_a_call_not_followed_silences_the_kernel() -> None:
    """The same racy kernel, but its barrier goes to a function the analysis cannot follow (it
    may wait on it): nothing is claimed."""
    source = (RACES / "racy" / "read_before_wait.py").read_text()
    assert _hazards(source, RACES / "racy" / "read_before_wait.py")
    hidden = source.replace("import jax\n", "import jax\nimport not_an_installed_module\n", 1).replace(
        "  v = smem[...]  # R: WG200\n", "  not_an_installed_module.sync(bar)\n  v = smem[...]\n")
    assert "not_an_installed_module.sync(bar)" in hidden
    assert _hazards(hidden, RACES / "racy" / "read_before_wait.py") == []


def test_a_race_on_some_path_only_is_not_claimed() -> None:
    """The racy read moved under a `pl.when` on a traced value: it may not run, so it proves
    nothing (the same read outside the `pl.when` is claimed)."""
    path = RACES / "racy" / "read_before_wait.py"
    source = path.read_text()
    maybe = source.replace("  v = smem[...]  # R: WG200\n",
                           "  v = jnp.zeros(SHAPE, jnp.float32)\n\n  @pl.when(x_ref[0, 0] > 0)\n"
                           "  def _():\n    out[...] = smem[...]\n\n")
    assert "@pl.when(" in maybe
    assert _hazards(maybe, path) == []
    assert _hazards(maybe.replace("x_ref[0, 0] > 0", "True"), path)


def test_a_loop_is_unrolled_only_with_python_int_bounds() -> None:
    """The multi-buffered loop's race is found step by step when its bounds are Python ints; with
    a traced trip count the slot of each step is unknown, and nothing is claimed."""
    path = RACES / "racy" / "fori_loop_read_before_slot_wait.py"
    source = path.read_text()
    assert [d.code for d in _hazards(source, path)] == ["WG200", "WG200"]
    traced = source.replace("jax.lax.fori_loop(0, STEPS, step, None)",
                            "jax.lax.fori_loop(0, x_ref[0, 0, 0].astype(jnp.int32), step, None)")
    assert traced != source
    assert _hazards(traced, path) == []


def test_a_slot_the_index_arithmetic_does_not_follow_is_unknown() -> None:
    """`i % 2` is followed through the steps; `jnp.minimum(i, 1)` is not: its slot is unknown, and
    the same reuse proves nothing."""
    path = RACES / "racy" / "fori_loop_store_slot_reuse.py"
    source = path.read_text()
    assert [d.code for d in _hazards(source, path)] == ["WG201"]
    unknown = source.replace("slot = i % 2", "slot = jnp.minimum(i, 1)")
    assert unknown != source
    assert _hazards(unknown, path) == []

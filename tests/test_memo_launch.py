"""A call of the document's own function that launches a kernel (a host function running a
`plgpu.kernel` whose body opens `run_scoped` scopes) is memoised like any other (interpret/memo.py):
a second call with equal arguments replays the first run instead of running the kernel again,
on a path as certain as the first run's (the kernel's shared memory is counted on certain paths
only). What the analysis reports, and the shared memory kept for hovers, are the same as when
each call runs the kernel (models/smem_budget.py `not_replayable` as it was: every running call
marked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.models import pallas, smem_budget
from wgmma_lsp.rules.registry import find_rule

SOURCE = '''\
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


BIG = 64


def _kernel(a_gmem, b_gmem, o_gmem):
  def body(a_smem, b_smem, acc_ref, big_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)

  pl.run_scoped(body, plgpu.SMEM((64, 64), jnp.bfloat16), plgpu.SMEM((64, 128), jnp.bfloat16),
                plgpu.ACC((64, 128), jnp.float32), plgpu.SMEM((BIG, 256), jnp.float32))


def matmul(a, b):
  return plgpu.kernel(_kernel, out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32))(a, b)


def main():
  a = jnp.zeros((64, 64), jnp.bfloat16)
  b = jnp.zeros((64, 128), jnp.bfloat16)
  matmul(a, b)
  matmul(a, b)
  matmul(a, b)
  if os.environ.get("AGAIN"):
    matmul(a, b)


if __name__ == "__main__":
  main()
'''


def _every_call_marked(interp) -> None:
    for entry in getattr(interp, "captures", ()):
        entry.writes_outside = True


def _report(tmp_path: Path, source: str, replayed: bool,
            monkeypatch: pytest.MonkeyPatch) -> tuple[list, dict, int]:
    with monkeypatch.context() as m:
        if not replayed:
            m.setattr(smem_budget, "not_replayable", _every_call_marked)
        runs = []
        original = pallas._run_kernel

        def counting(*args, **kwargs):
            runs.append(1)
            return original(*args, **kwargs)

        m.setattr(pallas, "_run_kernel", counting)
        analysis = analyze(source, str(tmp_path / "launch.py"))
        found = sorted((d.span.line + 1, d.span.col, d.code, d.message, d.severity,
                        tuple(r.span.line for r in d.related)) for d in diagnostics(analysis))
        smem = {span: sorted(map(repr, usages)) for span, usages in analysis.smem.items()}
        return found, smem, len(runs)


def test_a_kernel_launching_call_replays_with_the_same_findings(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    each_run, smem_each, runs_each = _report(tmp_path, SOURCE, False, monkeypatch)
    replayed, smem_replayed, runs_replayed = _report(tmp_path, SOURCE, True, monkeypatch)
    assert replayed == each_run
    assert smem_replayed == smem_each
    codes = [code for _, _, code, *_ in replayed]
    assert "WG001" in codes  # inside the kernel
    # The three certain calls: one run and two replays; the call under an undecided branch runs
    # (its kernel's shared memory is not counted there). A JAX whose lowering the kernel fails
    # too (a lowering-time finding, settled after the body ran) runs every call.
    lowering = any(find_rule(code).installed_stage() == "lower" for code in codes)
    assert runs_each - runs_replayed == (0 if lowering else 2)


def test_a_launch_whose_lowering_findings_settle_is_not_replayed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel fails to lower (a transpose, WG084; its shared memory exceeds the limit, WG032),
    but a trace-time error in its body (WG001) hides that, as JAX never lowers the kernel: a
    replay of what the call captured before that was settled would bring WG084 back as an
    error (it is a warning: the call under an undecided branch, whose WG001 is possible only,
    may lower). WG032, found after the body, after WG001, is never captured
    (interpret/followon.py)."""
    wgmma = "    plgpu.wgmma(acc_ref, a_smem, b_smem)\n"
    source = SOURCE.replace("BIG = 64", "BIG = 256").replace(wgmma, wgmma + "    _ = a_smem[...].T\n")
    each_run, smem_each, runs_each = _report(tmp_path, source, False, monkeypatch)
    replayed, smem_replayed, runs_replayed = _report(tmp_path, source, True, monkeypatch)
    assert replayed == each_run
    assert smem_replayed == smem_each
    codes = {(code, severity.name) for _, _, code, _, severity, _ in replayed}
    assert ("WG001", "ERROR") in codes and ("WG084", "WARNING") in codes
    assert not {c for c in codes if c[0] == "WG032" or c == ("WG084", "ERROR")}
    assert any("smem_bytes=286720" in u for usages in smem_replayed.values() for u in usages)
    assert runs_replayed == runs_each

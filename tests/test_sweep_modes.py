"""How much of a tuning loop is checked, and what a loop that expects an error is told.

A kernel's shared memory grows with `stages`; the tuning loop tries 1 to 4 stages and, like
jax's own tuning loops, skips the configurations JAX rejects with "exceeds available shared
memory" (4 stages and more: 4 x 64 KiB buffers > 227 KiB).

- The server keeps to a typing-speed budget; combinations it cuts get a WG903 note. `wgmma-lsp
  check` has time for every combination (`--sweeps all`, its default), and the project
  configuration can choose either (`sweeps = "all" | "budget"`).
- A finding that a handler of the loop catches by its very message is what the user's code
  expects there: not reported. Without that handler, the overflow is an error, named by the
  configuration it is proven in.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jax_oracle import kernel_keywords

from wgmma_lsp.analysis import analyze
from wgmma_lsp.cli import main
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import sweep_budget

KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def copy(x, stages):
  def body(x_gmem, o_gmem, buf_smem):
    del x_gmem, o_gmem, buf_smem

  return plgpu.kernel(
      body, {out}=jax.ShapeDtypeStruct((128, 128), jnp.float32),
      {scratch}=[plgpu.SMEM((stages, 128, 128), jnp.float32)],
  )(x)


def main():
  x = jax.ShapeDtypeStruct((128, 128), jnp.float32)
  for stages in (1, 2, 3, 4):
{loop_body}


if __name__ == "__main__":
  main()
'''
EXPECTING = '''\
    try:
      jax.jit(copy, static_argnums=1).trace(x, stages).lower(lowering_platforms=("cuda",))
    except ValueError as e:
      if "exceeds available shared memory" in e.args[0] or "Unsupported" in e.args[0]:
        continue
      raise'''
PLAIN = '''\
    jax.jit(copy, static_argnums=1).trace(x, stages).lower(lowering_platforms=("cuda",))'''


def source(loop_body: str) -> str:
    """The kernel file, with `plgpu.kernel`'s keywords as the installed JAX names them."""
    pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    return KERNEL.format(loop_body=loop_body, **kernel_keywords())


def codes(src: str, mode: str) -> list[tuple[str, str]]:
    with sweep_budget.sweep_mode(mode):
        return [(d.code, d.message) for d in diagnostics(analyze(src, "k.py"))]


@pytest.fixture
def one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typing-speed budget that lets only the first combination run."""
    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 1)


def test_a_loop_that_expects_the_overflow_is_clean_in_every_combination() -> None:
    assert codes(source(loop_body=EXPECTING), "all") == []


def test_without_the_handler_the_overflow_is_an_error_of_its_configuration() -> None:
    found = codes(source(loop_body=PLAIN), "all")
    assert [c for c, _ in found] == ["WG032"]
    assert "smem_bytes=262144 > max_smem_bytes=232448 (with stages=4," in found[0][1]


def test_the_budget_cuts_with_a_note_and_all_checks_everything(one_run: None) -> None:
    src = source(loop_body=PLAIN)
    budget = codes(src, "budget")
    assert [c for c, _ in budget] == ["WG903"]
    assert "checked 1 of 4 combinations" in budget[0][1]
    assert [c for c, _ in codes(src, "all")] == ["WG032"]


def test_check_checks_every_combination_unless_told(one_run: None, tmp_path: Path, capsys) -> None:
    f = tmp_path / "k.py"
    f.write_text(source(loop_body=PLAIN))
    assert main(["check", "--jobs", "1", str(f)]) == 1
    out = capsys.readouterr().out
    assert "WG032" in out and "WG903" not in out
    assert main(["check", "--jobs", "1", "--sweeps", "budget", str(f)]) == 0
    out = capsys.readouterr().out
    assert "WG903" in out and "checked 1 of 4 combinations" in out and "WG032" not in out
    (tmp_path / "pyproject.toml").write_text('[tool.wgmma-lsp]\nsweeps = "budget"\n')
    assert main(["check", "--jobs", "1", str(f)]) == 0
    assert "WG903" in capsys.readouterr().out
    assert main(["check", "--jobs", "1", "--sweeps", "all", str(f)]) == 1


def test_the_server_keeps_to_the_budget_by_default() -> None:
    assert sweep_budget.current_mode() == "budget"
    assert sweep_budget.sweep_steps(1000, 400_000) == 3000
    with sweep_budget.sweep_mode("all"):
        assert sweep_budget.sweep_steps(1000, 400_000) == 200_000
    with pytest.raises(ValueError):
        with sweep_budget.sweep_mode("some"):
            pass


def test_real_jax_agrees(tmp_path: Path) -> None:
    """Run by JAX (traced and lowered for CUDA on the CPU): the loop that expects the overflow
    runs through, the plain loop fails at 4 stages with the message and line reported above."""
    pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    from jax_oracle import trace_file

    expecting = tmp_path / "expecting.py"
    expecting.write_text(source(loop_body=EXPECTING))
    assert [(v.line, v.message) for v in trace_file(expecting)] == [(None, None)]
    plain = tmp_path / "plain.py"
    plain.write_text(source(loop_body=PLAIN))
    (verdict,) = trace_file(plain)
    assert verdict.message is not None and verdict.message.startswith(
        "Mosaic GPU kernel exceeds available shared memory: smem_bytes=262144 > max_smem_bytes=232448")
    with sweep_budget.sweep_mode("all"):
        reported = [d for d in diagnostics(analyze(plain.read_text(), str(plain))) if "stages=4" in d.message]
    # JAX's traceback holds no kernel frame for this lowering error: it blames the `.lower(...)`
    # call in main(). The diagnostic sits on the kernel that allocates too much and names that
    # call as its context.
    lines = plain.read_text().splitlines()
    assert "lower(lowering_platforms" in lines[verdict.line - 1]
    (d,) = reported
    assert "plgpu.kernel(" in lines[d.span.line] and f"from main() at line {verdict.line})" in d.message

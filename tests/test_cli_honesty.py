"""`wgmma-lsp check` says what it could not check: kernels analysed with nothing known about
their arguments (a library-style file: no `__main__` driver, no test, no trace comment)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.declared import parse_entry_points
from wgmma_lsp.interpret.kernel_reach import trace_comment

WGMMA_LSP = Path(sys.executable).with_name("wgmma-lsp")
#: Three kernels, one accumulator mistake each (those of examples/seed_errors.py), each launched
#: by its own function with `plgpu.kernel`, and nothing that calls those: a library.
LIBRARY = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
TILE_M, TILE_N = 64, 128


def scratch(a, b):
  return [plgpu.SMEM(a.shape, a.dtype, transforms=TRANSFORMS),
          plgpu.SMEM(b.shape, b.dtype, transforms=TRANSFORMS), plgpu.Barrier(num_arrivals=2)]


def load(a_gmem, b_gmem, a_smem, b_smem, barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
  plgpu.barrier_wait(barrier)


def scaled_matmul_kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
  load(a_gmem, b_gmem, a_smem, b_smem, barrier)

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16) * 0.5

  pl.run_scoped(body, plgpu.ACC((TILE_M, TILE_N), jnp.float32))


def transposed_update_kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
  load(a_gmem, b_gmem, a_smem, b_smem, barrier)

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    acc_ref[...] = acc_ref[...].T

  pl.run_scoped(body, plgpu.ACC((TILE_M, TILE_N), jnp.float32))


def smem_accumulator_kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
  load(a_gmem, b_gmem, a_smem, b_smem, barrier)

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)

  pl.run_scoped(body, plgpu.SMEM((TILE_M, TILE_N), jnp.float32))


def launch(kernel, a, b):
  out = jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), jnp.float32)
  return plgpu.kernel(kernel, out_type=out, scratch_types=scratch(a, b))(a, b)


def scaled_matmul(a, b):
  return launch(scaled_matmul_kernel, a, b)


def transposed_update(a, b):
  return launch(transposed_update_kernel, a, b)


def smem_accumulator(a, b):
  return launch(smem_accumulator_kernel, a, b)
'''
TRACED = LIBRARY + "".join(f"# wgmma-lsp: trace {f}(bf16[64,64], bf16[64,128])\n"
                           for f in ("scaled_matmul", "transposed_update", "smem_accumulator"))

CLEAN_LIBRARY = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def copy_kernel(x_ref, o_ref):
  o_ref[...] = x_ref[...]


def copy(x):
  return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
'''


def check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(WGMMA_LSP), "check", "--no-progress", *map(str, paths)],
                          capture_output=True, text=True, timeout=60)


def test_a_library_style_file_is_not_a_bare_pass(tmp_path: Path) -> None:
    f = tmp_path / "lib.py"
    f.write_text(CLEAN_LIBRARY)
    proc = check(f)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == (
        "All checks passed! (checked 1 kernel; 1 without concrete shapes: add a "
        "'# wgmma-lsp: trace ...' comment for more checks, see docs/trace-mode.md)")


def test_a_trace_comment_makes_it_a_plain_pass(tmp_path: Path) -> None:
    f = tmp_path / "lib.py"
    f.write_text(CLEAN_LIBRARY + "\n# wgmma-lsp: trace copy(f32[128,128])\n")
    proc = check(f)
    assert (proc.returncode, proc.stdout.splitlines()[-1]) == (0, "All checks passed!")


def test_findings_and_kernels_without_shapes_are_both_counted(tmp_path: Path) -> None:
    f = tmp_path / "lib.py"
    f.write_text(LIBRARY)
    proc = check(f)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1].startswith(
        "Found 3 errors in 1 file; 3 kernels checked without concrete shapes: ")


def test_kernels_reached_by_trace_comments_are_concrete() -> None:
    kernels = analyze(TRACED, "seed.py").kernels
    assert [k.name for k in kernels] == ["scaled_matmul_kernel", "transposed_update_kernel",
                                         "smem_accumulator_kernel"]
    assert all(k.concrete for k in kernels)
    assert not any(k.concrete for k in analyze(LIBRARY, "lib.py").kernels)


def test_the_suggested_trace_comment_parses_and_once_filled_gives_concrete_shapes() -> None:
    kernel = analyze(LIBRARY, "lib.py").kernels[0]
    assert kernel.entry is not None and kernel.entry.name == "scaled_matmul"
    comment = trace_comment(kernel.entry)
    assert comment == "# wgmma-lsp: trace scaled_matmul(a=..., b=...)"
    assert [e.call for e in parse_entry_points(comment)] == ["scaled_matmul(a=..., b=...)"]
    filled = comment.replace("a=...", "a=bf16[64,64]").replace("b=...", "b=bf16[64,128]")
    again = analyze(LIBRARY + filled + "\n", "lib.py").kernels
    assert [k.concrete for k in again] == [True, False, False]


# --- check --trace with nothing to trace ------------------------------------------------------

def test_trace_with_no_entry_points_says_nothing_was_traced(tmp_path: Path) -> None:
    f = tmp_path / "lib.py"
    f.write_text("import jax\nfrom jax.experimental import pallas as pl\n")
    proc = subprocess.run([str(WGMMA_LSP), "check", "--trace", "--no-progress", str(f)],
                          capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"--trace: nothing was traced in 1 of 1 analysed file ({f}): "
                               "no entry points declared. Declare one with a comment such as "
                               "'# wgmma-lsp: trace ")
    assert "All checks passed" not in proc.stdout
    assert lines[-1] == "No errors found by the static checks; nothing was traced (no entry points)."


def test_check_without_trace_does_not_mention_tracing(tmp_path: Path) -> None:
    f = tmp_path / "lib.py"
    f.write_text("import jax\nfrom jax.experimental import pallas as pl\n")
    assert check(f).stdout.splitlines() == ["All checks passed!"]


# --- the editor's code action -----------------------------------------------------------------

def _apply(source: str, edit) -> str:
    lines = source.splitlines(keepends=True)
    at = edit.span.line
    return "".join(lines[:at]) + edit.new_text + "".join(lines[at:])


def test_the_code_action_on_a_kernel_def_line_inserts_a_trace_comment_that_works() -> None:
    from wgmma_lsp.ide.code_actions import code_actions
    from wgmma_lsp.settings import Settings
    from wgmma_lsp.spans import Span

    analysis = analyze(LIBRARY, "lib.py")
    kernel = analysis.kernels[0]  # scaled_matmul_kernel, launched by scaled_matmul(a, b)
    on_def = Span(kernel.span.line, 0, kernel.span.line, 0)
    actions = [(d, f) for d, f in code_actions(analysis, Settings(), on_def)
               if f.title == "Add a wgmma-lsp trace comment"]
    assert len(actions) == 1 and actions[0][0].code == "WG906"
    (edit,) = actions[0][1].edits
    edited = _apply(LIBRARY, edit)
    entries = parse_entry_points(edited)
    assert [e.call for e in entries] == ["scaled_matmul(a=..., b=...)"]
    assert edited.splitlines()[entries[0].line + 1].startswith("def scaled_matmul(a, b):")
    filled = edited.replace("scaled_matmul(a=..., b=...)", "scaled_matmul(a=bf16[64,64], b=bf16[64,128])")
    assert [k.concrete for k in analyze(filled, "lib.py").kernels] == [True, False, False]
    # once declared, it is not offered again for that function
    assert not [f for _, f in code_actions(analyze(edited, "lib.py"), Settings(), on_def)
                if f.title == "Add a wgmma-lsp trace comment"]


def test_no_trace_comment_action_for_a_kernel_with_shapes() -> None:
    from wgmma_lsp.ide.code_actions import code_actions
    from wgmma_lsp.settings import Settings
    from wgmma_lsp.spans import Span

    analysis = analyze(TRACED, "seed.py")
    line = analysis.kernels[0].span.line
    assert not [f for _, f in code_actions(analysis, Settings(), Span(line, 0, line, 0))
                if f.title == "Add a wgmma-lsp trace comment"]


# --- a sweep cut by the analysis budget -------------------------------------------------------

def test_a_sweep_cut_by_the_budget_shows_in_the_summary(tmp_path: Path, monkeypatch, capsys) -> None:
    """`check` checks every combination by default; `--sweeps budget` cuts, and the summary
    says so even when the WG903 note itself is ignored."""
    from test_sweep_modes import PLAIN, source

    from wgmma_lsp.cli import main
    from wgmma_lsp.interpret import sweep_budget

    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)  # only the first combination runs
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 1)
    f = tmp_path / "k.py"
    f.write_text(source(loop_body=PLAIN))
    assert main(["check", "--jobs", "1", "--sweeps", "budget", "--ignore", "WG903", str(f)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("No errors found, but 1 sweep checked in part: combinations were left out "
                           "(WG903 says why; `--sweeps all` checks every combination of a loop)")
    assert main(["check", "--jobs", "1", str(f)]) == 1
    assert "checked in part" not in capsys.readouterr().out

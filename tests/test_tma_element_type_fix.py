"""WG071's quick fix (rules/tma_element_type.py): the buffer's allocation gets the GMEM array's
dtype where it is spelled out; a dtype a helper receives is its callers' to change, so no edit is
offered there. (JAX accepting the fixed kernel is checked by test_fixes_against_jax.py.)"""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

LANE = Path(__file__).parent / "fixtures" / "lowering" / "tma_copies_lane.py"

HELPER = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def smem(shape, dtype):
  return plgpu.SMEM(shape, dtype)


def other_dtype(x_gmem, o_gmem, bar):
  def body(x_smem):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, bar)
    plgpu.barrier_wait(bar)
  pl.run_scoped(body, smem((64, 64), jnp.bfloat16))


def f(x):
  return plgpu.kernel(other_dtype, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
                      scratch_types=[plgpu.Barrier()],
                      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))(x)

# wgmma-lsp: trace f(f32[64,64])
'''


def _wg071(source: str, path: str):
    return [d for d in diagnostics(analyze(source, path)) if d.code == "WG071"]


def test_the_allocation_written_with_its_dtype_gets_the_arrays() -> None:
    (d,) = _wg071(LANE.read_text(), str(LANE))
    (fix,) = d.fixes
    assert fix.preferred and [e.new_text for e in fix.edits] == ["jnp.float32"]
    (edit,) = fix.edits
    assert LANE.read_text().splitlines()[edit.span.line][edit.span.col:edit.span.end_col] == "jnp.bfloat16"


def test_a_dtype_a_helper_receives_is_not_rewritten(tmp_path: Path) -> None:
    (d,) = _wg071(HELPER, str(tmp_path / "k.py"))
    assert d.fixes == [] or all(f.title.startswith("Suppress") for f in d.fixes)


def test_a_dtype_read_from_an_object_is_not_rewritten(tmp_path: Path) -> None:
    source = HELPER.replace("def smem(shape, dtype):\n  return plgpu.SMEM(shape, dtype)",
                            "def smem(shape, config):\n  return plgpu.SMEM(shape, config.dtype)").replace(
        "smem((64, 64), jnp.bfloat16)", "smem((64, 64), Config())").replace(
        "def other_dtype", "class Config:\n  dtype = jnp.bfloat16\n\n\ndef other_dtype")
    assert "config.dtype" in source
    (d,) = _wg071(source, str(tmp_path / "k.py"))
    assert all(f.title.startswith("Suppress") for f in d.fixes)

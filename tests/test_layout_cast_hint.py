"""WG087 and the lowering's layout hint: a whole load of a tiled, swizzled SMEM tile whose next
operation is a `plgpu.layout_cast` of it takes the cast's layout, not WGMMA's (JAX's
`lower_jaxpr_to_mosaic_gpu` passes the cast's layout as `out_layout_hint`), so a 32-row tile cast
to Ampere's `MMA_RHS` lowers; with another operation in between, JAX's lowering raises WG087's
message at the load. Each variant goes through the analyzer and through JAX's lowering (JAX 0.12:
0.10 has no `Layout.MMA_*`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.jax_version import installed

pytestmark = pytest.mark.skipif(installed() is None or installed()[:2] < (0, 12),
                                reason="plgpu.Layout.MMA_* and plgpu.mma are JAX 0.12's")

KERNEL = '''import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
  plgpu.barrier_wait(barrier)
  a = plgpu.layout_cast(a_smem[...], plgpu.Layout.MMA_LHS(jnp.bfloat16))
  x = b_smem[...]
  LOAD_CAST
  acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(jnp.float32))
  o_smem[...] = plgpu.mma(acc, a, b)
  plgpu.commit_smem()
  plgpu.copy_smem_to_gmem(o_smem, o_gmem)
  plgpu.wait_smem_to_gmem(0)


def f(a, b):
  tiled = lambda t, s: (plgpu.TilingTransform((8, t)), plgpu.SwizzleTransform(s))
  return plgpu.kernel(
      kernel, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
      scratch_types=[plgpu.SMEM((64, 32), jnp.bfloat16, transforms=tiled(32, 64)),
                     plgpu.SMEM((32, 64), jnp.bfloat16, transforms=tiled(64, 128)),
                     plgpu.SMEM((64, 64), jnp.float32, transforms=tiled(32, 128)),
                     plgpu.Barrier(num_arrivals=2)],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )(a, b)

# wgmma-lsp: trace f(bf16[64,32], bf16[32,64])
'''
CAST = "b = plgpu.layout_cast(x, plgpu.Layout.MMA_RHS(jnp.bfloat16))"
MESSAGE = "Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape (32, 64)"


@pytest.mark.parametrize("cast, error", [
    (CAST, False),  # the cast is the load's next operation: its layout is the hint
    ("b = jnp.abs(x) + plgpu.layout_cast(x, plgpu.Layout.MMA_RHS(jnp.bfloat16))", True),
], ids=["cast-next", "another-op-first"])
def test_wg087_only_where_the_lowering_gets_no_hint(tmp_path: Path, cast: str, error: bool) -> None:
    path = tmp_path / "hint.py"
    source = KERNEL.replace("LOAD_CAST", cast)
    path.write_text(source)
    ours = {(d.span.line + 1, d.code, d.message) for d in diagnostics(analyze(source, str(path)))
            if d.code == "WG087"}
    jax_says = {(v.line, v.message) for v in trace_file(path, lower=True) if v.message is not None}
    if error:
        assert ours == {(11, "WG087", MESSAGE)} and jax_says == {(11, MESSAGE)}
    else:
        assert ours == set() and jax_says == set()

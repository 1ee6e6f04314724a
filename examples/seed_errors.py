"""Three small Hopper kernels, each with one of the accumulator mistakes wgmma-lsp catches.

Run `wgmma-lsp check examples/seed_errors.py` to see them, or open this file in an editor
with wgmma-lsp enabled. `examples/seed_fixed.py` is the same file with the fixes applied.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 64, 128, 64


def scaled_matmul_kernel(a_ref, b_ref, o_ref):
  """acc <- (a @ b) * 0.5, with the scaling done in bfloat16 by mistake."""

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    half = acc_ref[...].astype(jnp.bfloat16) * 0.5
    acc_ref[...] = half  # error: the accumulator holds float32
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((TILE_M, TILE_N), jnp.float32))


def transposed_update_kernel(a_ref, b_ref, o_ref):
  """Writes the transposed product back into the accumulator: the shapes no longer agree."""

  @functools.partial(pl.run_scoped, acc_ref=plgpu.ACC((TILE_M, TILE_N)))
  def _(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].T  # error: (128, 64) into a (64, 128) accumulator
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def smem_accumulator_kernel(a_ref, b_ref, o_ref):
  """Allocates the accumulator as plain shared memory instead of a WGMMA accumulator."""

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)  # error: acc_ref is not a WGMMA accumulator
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.SMEM((TILE_M, TILE_N), jnp.float32))


def matmul(kernel, a, b):
  """Runs `kernel(a_smem, b_smem, o_smem)` on one tile: `a` and `b` copied into shared memory
  tiled and swizzled (how WGMMA reads its operands), the result copied back."""
  transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))

  def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)
    kernel(a_smem, b_smem, o_smem)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((TILE_M, TILE_N), jnp.bfloat16),
      scratch_types=[
          plgpu.SMEM((TILE_M, TILE_K), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((TILE_K, TILE_N), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((TILE_M, TILE_N), jnp.bfloat16, transforms=transforms),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(a, b)


def scaled_matmul(a, b):
  return matmul(scaled_matmul_kernel, a, b)


def transposed_update(a, b):
  return matmul(transposed_update_kernel, a, b)


def smem_accumulator(a, b):
  return matmul(smem_accumulator_kernel, a, b)


# wgmma-lsp: trace scaled_matmul(bf16[64,64], bf16[64,128])
# wgmma-lsp: trace transposed_update(bf16[64,64], bf16[64,128])
# wgmma-lsp: trace smem_accumulator(bf16[64,64], bf16[64,128])

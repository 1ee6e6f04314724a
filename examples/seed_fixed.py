"""The three kernels of seed_errors.py with the fixes wgmma-lsp offers applied: JAX traces and
lowers all three (`wgmma-lsp check --trace examples/seed_fixed.py` has it do so for the entry
points at the end). Compare with `examples/seed_errors.py` to see each mistake and its fix.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TILE_M, TILE_N, TILE_K = 64, 128, 64
SWIZZLE = plgpu.find_swizzle(TILE_K * jnp.dtype(jnp.bfloat16).itemsize * 8)
SWIZZLED = (plgpu.TilingTransform((8, SWIZZLE // jnp.dtype(jnp.bfloat16).itemsize)),
            plgpu.SwizzleTransform(SWIZZLE))


def scaled_matmul_kernel(a_ref, b_ref, o_ref):
  """acc <- (a @ b) * 0.5, scaled in bfloat16 and cast back to the float32 accumulator."""

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    half = acc_ref[...].astype(jnp.bfloat16) * 0.5
    acc_ref[...] = half.astype(jnp.float32)  # fixed: cast back to the accumulator dtype
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((TILE_M, TILE_N), jnp.float32))


def transposed_update_kernel(a_ref, b_ref, o_ref):
  """Loads the accumulator and stores it back unchanged (no transpose): the shapes agree."""

  @functools.partial(pl.run_scoped, acc_ref=plgpu.ACC((TILE_M, TILE_N)))
  def _(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...]  # fixed: no transpose between load and store
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def smem_accumulator_kernel(a_ref, b_ref, o_ref):
  """Allocates the accumulator with plgpu.ACC, as plgpu.wgmma requires."""

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)  # fixed: acc_ref is allocated with plgpu.ACC
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((TILE_M, TILE_N), jnp.float32))


def matmul(kernel, a, b):
  """Runs `kernel(a_smem, b_smem, o_smem)` on one tile: `a` and `b` copied into shared memory
  tiled and swizzled (how WGMMA reads its operands), the result copied back."""
  transforms = SWIZZLED  # Lane lowering (JAX 0.10's default) needs them (WG018/WG019)

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

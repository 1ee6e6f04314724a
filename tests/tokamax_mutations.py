"""Seeded bugs planted in tokamax's Mosaic GPU kernels, and the two verdicts on them.

As `shipped_mutations.py` does for jax's own kernels: each mutation is a small textual edit of
the INSTALLED tokamax file (read at test time, never copied here), located by an exact pattern
(the edit fails loudly when the installed file no longer has it) and kept on its line, so line
numbers keep their meaning. The mutated file gets the harness of `tokamax_harness.py` (CPU shims
and concrete entry points), is written to a temporary folder and goes to real JAX
(`jax.make_jaxpr` on the CPU, then, for every mutant, the Mosaic GPU lowering for "cuda": the
checks JAX makes only while lowering count too); the same mutated text goes to wgmma-lsp,
analysed as the installed file it replaces (so that it resolves its own package). They agree when JAX's error (first line of its message,
blamed line) is among our errors, and when JAX accepts the mutant and we report no error.

    .venv312/bin/python tests/tokamax_mutations.py [ID_SUBSTRING...]   # every verdict, the rate
"""

from __future__ import annotations

import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shipped_harness import first_line  # noqa: E402
from shipped_mutations import Mutation, Outcome, Reported, our_errors, verdict  # noqa: E402
from tokamax_harness import (  # noqa: E402
    ENTRIES, harnessed_copy, jax_rejects_unmutated, ops_dir, trace, with_harness,
)

GLU = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py"
RD = "ragged_dot/pallas_mosaic_gpu_kernel_sm90.py"
ATT = "attention/pallas_mosaic_gpu_kernel_sm90.py"
VJP = "attention/pallas_mosaic_gpu_vjp_kernel_sm90.py"
GLU100 = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm100.py"
RD100 = "ragged_dot/pallas_mosaic_gpu_kernel_sm100.py"
ATT100 = "attention/pallas_mosaic_gpu_kernel_sm100.py"
VJP100 = "attention/pallas_mosaic_gpu_vjp_kernel_sm100.py"
GLU80 = "gated_linear_unit/pallas_mosaic_gpu_kernel_sm80.py"
RD80 = "ragged_dot/pallas_mosaic_gpu_kernel_sm80.py"

_SHORT = {GLU: "glu", RD: "ragged_dot", ATT: "attention", VJP: "attention_vjp", GLU100: "glu_sm100",
          RD100: "ragged_dot_sm100", ATT100: "attention_sm100",
          VJP100: "attention_vjp_sm100", GLU80: "glu_sm80", RD80: "ragged_dot_sm80"}


@dataclass(frozen=True)
class TokamaxMutation(Mutation):
    """A mutation of one tokamax kernel file (`file`: its path under `tokamax/_src/ops/`)."""

    @property
    def id(self) -> str:
        return f"{_SHORT.get(self.file, self.file)}:{self.name}"


def _after(pattern: str, stmt: str) -> tuple[str, str]:
    """Plant `stmt` on the same line, after the statement `pattern` ends."""
    return pattern, f"{pattern}; {stmt}"


M = TokamaxMutation
_GLU_ACC = "acc_ref=plgpu.ACC((tile_m, 2 * tile_n), jnp.float32)"
_RD_ACC = "acc = pl.run_scoped(compute_acc, plgpu.ACC((block_m, block_n)))"
_RC_ACC = "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n)))"
_ATT_QK_ACC = "acc_type = plgpu.ACC((block_q, block_kv), jnp.float32)"
_ATT_QK = "plgpu.wgmma(acc, q_smem.at[block.ds(wg, block_q)], k_smem.at[si].T)"
_ATT_PV = "plgpu.wgmma(acc, p_, v_smem.at[si])"

MUTATIONS: list[TokamaxMutation] = [
    # -- gated linear unit (sm90): `@functools.partial(pl.run_scoped, acc_ref=plgpu.ACC(...))`,
    #    a warp-specialized pipeline whose allocations come from `get_allocations`, lax.cond
    M(GLU, "acc-store-bf16", *_after("eval_pipeline(acc_ref)",
                                     "acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)")),
    M(GLU, "acc-sizes-swapped", _GLU_ACC, "acc_ref=plgpu.ACC((2 * tile_n, tile_m), jnp.float32)"),
    M(GLU, "acc-in-smem", _GLU_ACC, "acc_ref=plgpu.SMEM((tile_m, 2 * tile_n), jnp.float32)"),
    M(GLU, "acc-bf16", _GLU_ACC, "acc_ref=plgpu.ACC((tile_m, 2 * tile_n), jnp.bfloat16)"),
    M(GLU, "wgmma-operands-swapped-cond", "plgpu.wgmma(acc_ref, a_smem, reshaped_b0)",
      "plgpu.wgmma(acc_ref, reshaped_b0, a_smem)"),
    M(GLU, "wgmma-operands-swapped-m", "plgpu.wgmma(acc_ref, a_smem.at[wg_m_slice], reshaped_b)",
      "plgpu.wgmma(acc_ref, reshaped_b, a_smem.at[wg_m_slice])"),
    M(GLU, "b-not-collapsed", "plgpu.wgmma(acc_ref, a_smem, reshaped_b1)",
      "plgpu.wgmma(acc_ref, a_smem, b_smem1)"),
    M(GLU, "epilogue-store-f32", "acc = acc.astype(dtype)", "acc = acc.astype(jnp.float32)"),
    M(GLU, "out-scratch-f32", "(2, num_out_slots, epi_tile_m, epi_tile_n),\n          dtype,",
      "(2, num_out_slots, epi_tile_m, epi_tile_n),\n          jnp.float32,"),
    M(GLU, "out-scratch-epi-swapped", "(2, num_out_slots, epi_tile_m, epi_tile_n),",
      "(2, num_out_slots, epi_tile_n, epi_tile_m * 2),"),
    M(GLU, "lhs-bad-swizzle", "plgpu.SwizzleTransform(swizzle),", "plgpu.SwizzleTransform(32),"),
    M(GLU, "lhs-bad-tiling", "plgpu.TilingTransform((8, swizzle_elems)),",
      "plgpu.TilingTransform((8, swizzle_elems // 2)),"),
    M(GLU, "out-bad-swizzle", "plgpu.SwizzleTransform(out_swizzle),", "plgpu.SwizzleTransform(32),"),
    M(GLU, "pipeline-too-deep", "max_concurrent_steps=num_stages,",
      "max_concurrent_steps=num_stages * 8,"),
    M(GLU, "py-or-default", "epi_tile_n = config.epi_tile_n or tile_n", "epi_tile_n = (config.epi_tile_n and None) or tile_n // 2"),
    # harmless edits: JAX accepts them, so must we
    M(GLU, "harmless-memory-registers", "memory_registers=40,", "memory_registers=48,"),
    M(GLU, "harmless-acc-roundtrip", "acc = acc_ref[...].astype(dtype).astype(jnp.float32)",
      "acc = acc_ref[...].astype(jnp.float32)"),
    # -- gated linear unit (sm100, Blackwell: tcgen05 into TMEM; lowered for sm_100a): the scratch
    #    as a `dict(...)` of keyword arguments, `**barrier_kwargs`, `@plgpu.dynamic_scheduling_loop`
    M(GLU100, "acc-tmem-in-smem", "acc0_tmem=plgpu.TMEM(\n              tmem_acc_shape, jnp.float32, collective=collective",
      "acc0_tmem=plgpu.SMEM(\n              tmem_acc_shape, jnp.float32"),
    M(GLU100, "acc-tmem-bf16", "acc0_tmem=plgpu.TMEM(\n              tmem_acc_shape, jnp.float32,",
      "acc0_tmem=plgpu.TMEM(\n              tmem_acc_shape, jnp.bfloat16,"),
    M(GLU100, "acc-tmem-too-many-rows", "tmem_acc_shape = (tile_m, tile_n * 2)",
      "tmem_acc_shape = (tile_m * 2, tile_n * 2)"),
    M(GLU100, "mma-operands-swapped", "                  a_smem.at[slot],\n                  b_smems[i].at[slot],",
      "                  b_smems[i].at[slot],\n                  a_smem.at[slot],"),
    M(GLU100, "a-smem-k-halved", "(max_concurrent_steps, tile_m, tile_k),",
      "(max_concurrent_steps, tile_m, tile_k // 2),"),
    M(GLU100, "epilogue-store-f32", "acc_smem_ni[...] = (activation(val0) * val1).astype(dtype)",
      "acc_smem_ni[...] = (activation(val0) * val1).astype(jnp.float32)"),
    M(GLU100, "out-scratch-f32", "(2, tile_m, epi_tile_n), dtype, transforms=out_transforms",
      "(2, tile_m, epi_tile_n), jnp.float32, transforms=out_transforms"),
    M(GLU100, "bad-swizzle", "plgpu.SwizzleTransform(swizzle),", "plgpu.SwizzleTransform(32),"),
    M(GLU100, "pipeline-too-deep", "max_concurrent_steps = config.num_stages",
      "max_concurrent_steps = config.num_stages * 8"),
    M(GLU100, "harmless-store-wait", "plgpu.wait_smem_to_gmem(2, wait_read_only=True)",
      "plgpu.wait_smem_to_gmem(1, wait_read_only=True)"),
    # -- ragged dot (sm90): persistent vs. not chosen from the config, `plgpu.nd_loop(...)(f)` on
    #    a `functools.partial`, block specs from a tokamax helper
    M(RD, "acc-store-bf16", *_after("plgpu.wgmma(acc, lhs_smem, rhs_smem)",
                                    "acc[...] = acc[...].astype(jnp.bfloat16)")),
    M(RD, "acc-sizes-swapped", _RD_ACC, "acc = pl.run_scoped(compute_acc, plgpu.ACC((block_n, block_m)))"),
    M(RD, "acc-in-smem", _RD_ACC,
      "acc = pl.run_scoped(compute_acc, plgpu.SMEM((block_m, block_n), jnp.float32))"),
    M(RD, "acc-bf16", _RD_ACC,  # JAX's MLIR verifier rejects it: at lowering (found once the
      # file reads its own package's modules)
      "acc = pl.run_scoped(compute_acc, plgpu.ACC((block_m, block_n), jnp.bfloat16))", lower=True),
    M(RD, "wgmma-operands-swapped", "plgpu.wgmma(acc, lhs_smem, rhs_smem)",
      "plgpu.wgmma(acc, rhs_smem, lhs_smem)"),
    M(RD, "epilogue-no-cast", "o_smem[...] = acc_.astype(o_smem.dtype)\n          plgpu.commit_smem()",
      "o_smem[...] = acc_\n          plgpu.commit_smem()"),
    M(RD, "out-smem-shape-swapped", "(block_m, block_n), o_gmem.dtype, tiling_prefix=(1,)",
      "(block_n, block_m), o_gmem.dtype, tiling_prefix=(1,)"),
    M(RD, "pipeline-too-deep", "max_concurrent_steps=config.num_stages,",
      "max_concurrent_steps=config.num_stages * 16,"),
    M(RD, "contracting-acc-in-smem", _RC_ACC,
      "acc = pl.run_scoped(acc_scope, plgpu.SMEM((block_m, block_n), jnp.float32))"),
    M(RD, "contracting-acc-sizes-swapped", _RC_ACC,
      "acc = pl.run_scoped(acc_scope, plgpu.ACC((block_n, block_m)))"),
    M(RD, "contracting-operands-swapped", "plgpu.wgmma(acc, lhs_smem[...] * mask, rhs_smem)",
      "plgpu.wgmma(acc, rhs_smem, lhs_smem[...] * mask)"),
    M(RD, "contracting-epilogue-no-cast",
      "o_smem[...] = acc_.astype(o_smem.dtype)\n    plgpu.commit_smem()",
      "o_smem[...] = acc_\n    plgpu.commit_smem()"),
    M(RD, "py-branch-swapped", "  if config.persistent:\n    grid", "  if not config.persistent:\n    grid"),
    M(RD, "harmless-wait", "plgpu.wgmma_wait(1)\n\n          spec", "plgpu.wgmma_wait(0)\n\n          spec"),
    # an untransformed epilogue buffer: JAX 0.12's Warpgroup layout inference plans the store
    # (Lane would find no conflict-free plan: WG121, not claimed under Warpgroup)
    M(RD, "harmless-out-smem-untransformed",
      'o_smem_type = _tiled_swizzled_smem(\n            (block_m, block_n), o_gmem.dtype, tiling_prefix=(1,), what="out"\n        )',
      "o_smem_type = plgpu.SMEM((block_m, block_n), o_gmem.dtype)"),
    # -- ragged dot (sm100): `@mgpu_lib.warp_map_when(wg == _COMPUTE_WG)` (a tokamax decorator that
    #    returns a lambda), `@plgpu.dynamic_scheduling_loop(..., init_carry=0)`, a collective config
    M(RD100, "acc-tmem-in-smem",
      "acc_tmem=plgpu.TMEM(\n          (block_n, cluster_block_m * 2), jnp.float32, collective=collective",
      "acc_tmem=plgpu.SMEM(\n          (block_n, cluster_block_m * 2), jnp.float32"),
    M(RD100, "acc-tmem-sizes-swapped", "(block_n, cluster_block_m * 2), jnp.float32, collective=collective",
      "(cluster_block_m * 2, block_n), jnp.float32, collective=collective"),
    M(RD100, "mma-operands-swapped", "w_smem.at[si_tma],\n                    x_smem.at[si_tma].T,",
      "x_smem.at[si_tma].T,\n                    w_smem.at[si_tma],"),
    M(RD100, "mma-no-transpose", "                    x_smem.at[si_tma].T,", "                    x_smem.at[si_tma],"),
    M(RD100, "epilogue-no-cast", "acc = acc.astype(acc_smem.dtype)", "acc = acc"),
    M(RD100, "x-smem-f32", 'common.tiled_swizzled_smem(x_smem_shape, lhs.dtype, "x")',
      'common.tiled_swizzled_smem(x_smem_shape, jnp.float32, "x")'),
    M(RD100, "acc-smem-shape-swapped", "(cluster_block_m, block_n), out_dtype, \"acc\"",
      "(block_n, cluster_block_m * 2), out_dtype, \"acc\""),
    M(RD100, "pipeline-too-deep", "num_stages = min(config.num_stages, k_iters)",
      "num_stages = min(config.num_stages * 8, k_iters)"),
    M(RD100, "harmless-stages", "num_stages = min(config.num_stages, k_iters)",
      "num_stages = min(config.num_stages - 1, k_iters)"),
    # -- flash attention forward (sm90): scratch built by a helper as a dict, `**scratch`, the
    #    kernel wrapper chosen from `config.persistent`, `@grid_loop(init_carry=0)`, lax.cond
    M(ATT, "py-kwargs-v-scratch-f32", '      v_smem=tiled_smem((num_stages, block_kv, head_dim_out), v.dtype, "v"),',
      '      **{"v_smem": tiled_smem((num_stages, block_kv, head_dim_out), jnp.float32, "v")},'),
    M(ATT, "qk-acc-in-smem", _ATT_QK_ACC, "acc_type = plgpu.SMEM((block_q, block_kv), jnp.float32)"),
    M(ATT, "qk-acc-sizes-swapped", _ATT_QK_ACC, "acc_type = plgpu.ACC((block_kv, block_q), jnp.float32)"),
    M(ATT, "qk-acc-bf16", _ATT_QK_ACC, "acc_type = plgpu.ACC((block_q, block_kv), jnp.bfloat16)",
      lower=True),  # rejected by JAX's MLIR verifier, at lowering
    M(ATT, "qk-operands-swapped", _ATT_QK,
      "plgpu.wgmma(acc, k_smem.at[si].T, q_smem.at[block.ds(wg, block_q)])"),
    M(ATT, "qk-no-transpose", _ATT_QK, "plgpu.wgmma(acc, q_smem.at[block.ds(wg, block_q)], k_smem.at[si])"),
    M(ATT, "pv-store-bf16", *_after(_ATT_PV, "acc[...] = acc[...].astype(jnp.bfloat16)")),
    M(ATT, "pv-operands-swapped", _ATT_PV, "plgpu.wgmma(acc, v_smem.at[si], p_)"),
    M(ATT, "pv-p-not-cast", "p_ = p.astype(v.dtype)", "p_ = p"),
    M(ATT, "pv-acc-init-bf16", "plgpu.ACC.init(acc)", "plgpu.ACC.init(acc.astype(jnp.bfloat16))"),
    M(ATT, "k-scratch-f32", 'k_scratch = tiled_smem((num_stages, block_kv, head_dim), k.dtype, "k")',
      'k_scratch = tiled_smem((num_stages, block_kv, head_dim), jnp.float32, "k")'),
    M(ATT, "residual-scratch-bf16", "l_scratch = m_scratch = plgpu.SMEM((_COMPUTE_WGS, block_q), jnp.float32)",
      "l_scratch = m_scratch = plgpu.SMEM((_COMPUTE_WGS, block_q), jnp.bfloat16)"),
    M(ATT, "pipeline-too-deep", "num_stages = config.num_stages\n\n  epi_tile_q",
      "num_stages = config.num_stages * 8\n\n  epi_tile_q"),
    M(ATT, "harmless-tiny", "l_i += float(jnp.finfo(jnp.float32).tiny)", "l_i += 1e-30"),
    # -- flash attention forward (sm100): TMEM scratch from a local `tmem(shape, dtype=..., **kwargs)`
    #    helper, `maybe_cluster_barrier` a `functools.partial` or a class by config, a RefUnion, an
    #    epilogue driven by generators (`for ds, si, acc in two_in_flight(load_acc_tiles())`)
    M(ATT100, "s-tmem-in-smem", "s_tmem=tmem((tile_q, block_kv)),",
      "s_tmem=plgpu.SMEM((tile_q, block_kv), jnp.float32),"),
    M(ATT100, "s-tmem-half-width", "s_tmem=tmem((tile_q, block_kv)),", "s_tmem=tmem((tile_q, block_kv // 2)),"),
    M(ATT100, "acc-tmem-bf16", "acc_tmem=tmem((tile_q, head_dim_out)),",
      "acc_tmem=tmem((tile_q, head_dim_out), jnp.bfloat16),"),
    M(ATT100, "qk-operands-swapped", "q_smem.at[:, ds],\n                  k_smem.at[si, i].T,",
      "k_smem.at[si, i].T,\n                  q_smem.at[:, ds],"),
    M(ATT100, "qk-no-transpose", "                  k_smem.at[si, i].T,", "                  k_smem.at[si, i],"),
    M(ATT100, "pv-operands-swapped", "p_tmem.at[p_si],\n                  v_smem.at[v_si, i],",
      "v_smem.at[v_si, i],\n                  p_tmem.at[p_si],"),
    M(ATT100, "p-tmem-f32", "p_tmem=tmem((softmax_slots, tile_q, block_kv), v.dtype, packed=True),",
      "p_tmem=tmem((softmax_slots, tile_q, block_kv), jnp.float32, packed=True),"),
    M(ATT100, "alpha-scratch-bf16", "alpha_smem=plgpu.SMEM((softmax_slots, tile_q), jnp.float32),",
      "alpha_smem=plgpu.SMEM((softmax_slots, tile_q), jnp.bfloat16),"),
    M(ATT100, "o-scratch-f32", 'o_scratch = tiled_smem((num_epi_slots, tile_q, epi_tile_d), out_dtype, "o")',
      'o_scratch = tiled_smem((num_epi_slots, tile_q, epi_tile_d), jnp.float32, "o")'),
    M(ATT100, "epilogue-no-cast", "acc = (acc * l_rcp[:, ds]).astype(o_smem.dtype)", "acc = acc * l_rcp[:, ds]"),
    M(ATT100, "pipeline-too-deep", "num_stages = config.num_stages\n  num_tma_splits",
      "num_stages = config.num_stages * 8\n  num_tma_splits"),
    M(ATT100, "harmless-parens", "accumulate=i > 0,", "accumulate=(i > 0),"),
    # -- flash attention backward (sm100): scratch dicts from helpers `_get_dq_scratch_shapes(...)`
    #    with `plgpu.RefUnion` of two TMEM refs, `shapes["..."] = ...` by config
    M(VJP100, "s-tmem-in-smem", "s_tmem=plgpu.TMEM((block_q, block_kv), jnp.float32),",
      "s_tmem=plgpu.SMEM((block_q, block_kv), jnp.float32),"),
    M(VJP100, "dq-tmem-bf16", "dq_tmem=plgpu.TMEM((block_q, head_dim), jnp.float32),",
      "dq_tmem=plgpu.TMEM((block_q, head_dim), jnp.bfloat16),"),
    M(VJP100, "qk-operands-swapped", "plgpu.tcgen05_mma(s_tmem, q_smem, k_smem.at[si].T, accumulate=False)",
      "plgpu.tcgen05_mma(s_tmem, k_smem.at[si].T, q_smem, accumulate=False)"),
    M(VJP100, "dov-no-transpose", "plgpu.tcgen05_mma(dp_tmem, do_smem, v_smem.at[si].T, accumulate=False)",
      "plgpu.tcgen05_mma(dp_tmem, do_smem, v_smem.at[si], accumulate=False)"),
    M(VJP100, "dkv-s-operands-swapped", "plgpu.tcgen05_mma(s_tmem, k_smem, q_smem.at[si].T, accumulate=False)",
      "plgpu.tcgen05_mma(s_tmem, q_smem.at[si].T, k_smem, accumulate=False)"),
    M(VJP100, "dk-tmem-sizes-swapped", "dk_tmem=plgpu.TMEM((block_kv, head_dim), jnp.float32),",
      "dk_tmem=plgpu.TMEM((head_dim, block_kv), jnp.float32),"),
    M(VJP100, "residuals-scratch-bf16", "residuals_smem=plgpu.SMEM((3, residual_stages, block_q), jnp.float32),",
      "residuals_smem=plgpu.SMEM((3, residual_stages, block_q), jnp.bfloat16),"),
    M(VJP100, "k-scratch-f32", "k_smem=_tiled_smem((num_stages, block_kv, head_dim), k_dtype),",
      "k_smem=_tiled_smem((num_stages, block_kv, head_dim), jnp.float32),"),
    M(VJP100, "pipeline-too-deep", "num_stages = config.num_stages\n\n  shapes = dict(",
      "num_stages = config.num_stages * 8\n\n  shapes = dict("),
    M(VJP100, "harmless-parens", "accumulate=ki > lb)", "accumulate=(ki > lb))"),
    # -- flash attention backward (sm90): scoped accumulators from `q_smem.shape`, two ACCs in
    #    one `pl.run_scoped`, `plgpu.wgmma_accumulator_load`
    M(VJP, "dq-acc-in-smem", "plgpu.ACC(q_smem.shape, jnp.float32)", "plgpu.SMEM(q_smem.shape, jnp.float32)"),
    M(VJP, "dq-store-f32", "q_smem[...] = dq.astype(dtype)", "q_smem[...] = dq"),
    M(VJP, "s-operands-swapped", "plgpu.wgmma(s_acc, q_smem, k_smem.T)", "plgpu.wgmma(s_acc, k_smem.T, q_smem)"),
    M(VJP, "dq-acc-sizes-swapped", "acc_type = plgpu.ACC((block_q, block_kv), jnp.float32)",
      "acc_type = plgpu.ACC((block_kv, block_q), jnp.float32)"),
    M(VJP, "dkv-acc-in-smem", "dk_acc_type = plgpu.ACC(k_smem.shape, jnp.float32)",
      "dk_acc_type = plgpu.SMEM(k_smem.shape, jnp.float32)"),
    M(VJP, "dv-store-f32", "v_smem[...] = dv.astype(v.dtype)", "v_smem[...] = dv"),
    M(VJP, "dkv-s-acc-sizes-swapped", "acc_type = plgpu.ACC((block_kv, block_q), jnp.float32)",
      "acc_type = plgpu.ACC((block_q, block_kv), jnp.float32)"),
    M(VJP, "dv-p-not-cast", "plgpu.wgmma(dv_acc, p.astype(dtype), dout_smem)",
      "plgpu.wgmma(dv_acc, p, dout_smem)"),
    M(VJP, "dk-operands-swapped", "plgpu.wgmma(dk_acc, ds.astype(dtype), q_smem)",
      "plgpu.wgmma(dk_acc, q_smem, ds.astype(dtype))"),
    M(VJP, "q-scratch-f32", 'tiled_wgs_smem((block_q_dq, head_dim), q.dtype, "q")',
      'tiled_wgs_smem((block_q_dq, head_dim), jnp.float32, "q")'),
    M(VJP, "pipeline-too-deep", "max_concurrent_steps=min(config.num_stages, num_kv_tiles),",
      "max_concurrent_steps=min(config.num_stages * 16, num_kv_tiles),"),
    # -- gated linear unit and ragged dot (sm80, Ampere: `plgpu.mma` on register values carried
    #    through `emit_pipeline`'s `init_carry`; lowered for an A100 stand-in)
    M(GLU80, "acc-bf16", "acc = jnp.zeros(out_smem.shape, jnp.float32)",
      "acc = jnp.zeros(out_smem.shape, jnp.bfloat16)"),
    M(GLU80, "mma-operands-swapped", "gates = plgpu.mma(gates, x, w)", "gates = plgpu.mma(gates, w, x)"),
    M(GLU80, "epilogue-no-cast", "out_smem[...] = (proj * activation(gates)).astype(dtype)",
      "out_smem[...] = (proj * activation(gates))"),
    M(RD80, "acc-bf16", "acc = jnp.zeros((block_m, block_n), jnp.float32)",
      "acc = jnp.zeros((block_m, block_n), jnp.bfloat16)"),
    M(RD80, "mma-operands-swapped", "return plgpu.mma(acc, a, b)", "return plgpu.mma(acc, b, a)"),
    M(RD80, "epilogue-no-cast", "plgpu.store(out_smem, acc.astype(out_smem.dtype), optimized=False)",
      "plgpu.store(out_smem, acc, optimized=False)"),
    M(RD80, "harmless-out-scratch-f16", "plgpu.SMEM((block_m, block_n), out_dtype),",
      "plgpu.SMEM((block_m, block_n), jnp.float16),"),
]

#: The kinds of mistake issue 17 names, each planted at least once (names of the mutations).
SEED_CLASSES: dict[str, set[str]] = {
    "accumulator stored in bf16": {"acc-store-bf16", "pv-store-bf16"},
    "accumulator shape swapped": {"acc-sizes-swapped", "qk-acc-sizes-swapped"},
    "accumulator allocated in SMEM": {"acc-in-smem", "qk-acc-in-smem", "dq-acc-in-smem", "acc-tmem-in-smem"},
    "swapped wgmma operands": {"wgmma-operands-swapped", "wgmma-operands-swapped-cond", "qk-operands-swapped"},
    "wrong scratch dtype": {"out-scratch-f32", "k-scratch-f32", "q-scratch-f32"},
    "bad swizzle": {"lhs-bad-swizzle", "out-bad-swizzle"},
    "pipeline too deep for SMEM": {"pipeline-too-deep"},
}


_DIM = r"[\w.?]+(?:\s*(?:\*\*|[*+/%-]|//)\s*[\w.?]+)*"
_DIMS = re.compile(r"(?P<open>[\[(])(?P<dims>" + _DIM + r"(?:,\s*" + _DIM + r")*,?)(?P<close>[\])])")


def symbolic_match(ours: str, jax: str) -> bool:
    """Our message is JAX's with some sizes left symbolic or unknown (`float32[config.block_m, 128]`
    or `lhs=(?, 64)` for JAX's `float32[64,128]`, `lhs=(64, 64)`): every dims group of ours that
    names a variable or a `?` matches any dims. Not JAX's message, but not a different error."""
    parts, last = [], 0
    for m in _DIMS.finditer(ours):
        if not re.search(r"[A-Za-z_?]", m.group("dims")):
            continue
        parts += [re.escape(ours[last:m.start()]), re.escape(m.group("open")), r"[^\[\]()]*",
                  re.escape(m.group("close"))]
        last = m.end()
    if not parts:
        return False
    pattern = "".join(parts) + re.escape(ours[last:])
    return re.fullmatch(re.sub(r"\\ ", r"\\s*", pattern), jax) is not None


@dataclass
class TokamaxOutcome(Outcome):
    """`Outcome`, plus: an error of ours at JAX's line whose message is JAX's with symbolic sizes
    (`symbolic`) is not counted as wrong, nor as agreeing; when JAX blames no line of the file
    (a kernel-level lowering error, raised after the kernel's frames returned), our error with
    JAX's message anywhere in the file agrees. (Another error of ours with the same code on the
    line of a confirmed one, a second bad scratch buffer of the same kernel call, was excused as
    beyond what JAX's first error lets it check: it follows JAX's first error, and is no longer
    reported, `follow_ons`.)"""

    # every entry's error, (line, first line of the message): the harness has several entries
    # per file (configs that take different branches); `jax` is the first of them
    jax_all: list[tuple[int | None, str]] = field(default_factory=list)

    def _confirmed(self, e: Reported) -> bool:
        return any(e.matches(j) if j[0] is not None else first_line(e.message) == j[1]
                   for j in self.jax_all)

    def _is_jaxs(self, e: Reported, jax: tuple[int | None, str]) -> bool:
        """JAX's error (`jax`), at JAX's line (anywhere when JAX names none), or with sizes left
        symbolic."""
        if jax[0] is None:
            return first_line(e.message) == jax[1]
        return e.matches(jax) or (jax[0] in (e.line, e.blame_line)
                                  and symbolic_match(first_line(e.message), jax[1]))

    @property
    def symbolic(self) -> list[Reported]:
        return [e for e in self.ours if any(j[0] in (e.line, e.blame_line)
                                            and symbolic_match(first_line(e.message), j[1])
                                            for j in self.jax_all)]

    @property
    def agrees(self) -> bool:
        if self.jax is None:
            return not self.ours
        return any(self._confirmed(e) for e in self.ours)

    @property
    def false_errors(self) -> list[Reported]:
        if any(j[0] is None for j in self.jax_all):
            return []  # JAX names no line for one of its errors: it contradicts none of ours
        return [e for e in super().false_errors if e not in self.symbolic and not self._confirmed(e)]

    @property
    def beyond(self) -> list[Reported]:
        false = self.false_errors
        return [e for e in self.ours if self.jax is not None and not self._confirmed(e) and e not in false]


def harness_errors(source: str, path: str) -> list[Reported]:
    """Our errors (default settings, as `shipped_mutations.our_errors`) that the harness's JAX run
    can confirm or refute: proven without a context, or in a context made by one of the harness's
    `# wgmma-lsp: trace` entries. An error proven only in another context (a config class's
    defaults, a `get_heuristics_config`, one of tokamax's own tests) runs code with other values
    than JAX ran here."""
    return our_errors(source, path, keep=_harness_context)


def _harness_context(contexts) -> bool:
    return not contexts or any(c is None or c.origin.startswith("entry point `") for c in contexts)


def opened_findings(m: Mutation) -> list[tuple[Reported, bool]]:
    """What a kernel author sees with the mutant opened as it is (no harness: the file's own
    contexts, its package's tests and configs): every error and warning, with the line JAX
    would blame, and whether it is an error. (JAX's verdict still comes from the harness's configs, so a finding proven only
    in another config is neither confirmed nor refuted by it.)"""
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.entry.context import strip_context_note
    from wgmma_lsp.ide.diagnostics import diagnostics
    from wgmma_lsp.ide.model import Severity

    path = ops_dir() / m.file
    analysis = analyze(m.apply(path.read_text()), str(path))
    ON_SOME_PATHS = " (on some paths)"  # a warning's suffix (ide/diagnostics.py)
    shown = {(d.span, d.code, strip_context_note(d.message).removesuffix(ON_SOME_PATHS)): d.severity
             for d in diagnostics(analysis) if d.severity in (Severity.ERROR, Severity.WARNING)}
    out = {(Reported(f.span.line + 1, f.blame_line + 1 if f.blame_line >= 0 else f.span.line + 1,
                     f.rule.code, f.message, f.rule.stage,
                     f.rule.exception == "AssertionError" and f.rule.template.startswith("assert "),
                     f.data.get("jax_message") if isinstance(f.data, dict) else None),
            shown[(f.span, f.rule.code, f.message)] == Severity.ERROR)
           for f in analysis.findings if (f.span, f.rule.code, f.message) in shown}
    return sorted(out, key=lambda e: (e[0].line, e[0].code))


def mutated_source(m: Mutation) -> str:
    return with_harness(m.apply((ops_dir() / m.file).read_text()), m.file)


def run(m: Mutation, tmp: Path) -> TokamaxOutcome:
    """JAX's verdict (the mutant traced from `tmp`) and ours (the same text, analysed as the
    installed file)."""
    source = mutated_source(m)
    path = harnessed_copy(m.file, tmp, m.apply((ops_dir() / m.file).read_text()))
    path = path.rename(path.with_name(f"{m.id.replace(':', '__')}.py"))
    ran: set[int] = set()
    verdicts = trace(path, lower=True, ran=ran)
    failed = [v for v in verdicts if v.message is not None]
    jax_all = [verdict(v) for v in failed]
    return TokamaxOutcome(m, jax_all[0] if jax_all else None, harness_errors(source, str(ops_dir() / m.file)),
                          ran, failed[0].stage if failed else None,
                          jax_by_entry={v.entry: verdict(v) for v in verdicts}, jax_all=jax_all)


def run_all(only: list[str] | None = None) -> list[TokamaxOutcome]:
    """Every mutation, but those of a kernel file JAX rejects as tokamax wrote it (an API the
    installed JAX removed: `jax_rejects_unmutated`), where no planted bug can be judged."""
    with tempfile.TemporaryDirectory() as tmp:
        return [run(m, Path(tmp)) for m in MUTATIONS if (not only or any(o in m.id for o in only))
                and not jax_rejects_unmutated(m.file)]


def recall(outcomes: list[Outcome]) -> tuple[int, int]:
    """(reported at JAX's line with JAX's message, rejected by JAX)."""
    rejected = [o for o in outcomes if o.rejected]
    return sum(o.agrees for o in rejected), len(rejected)


def report(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        mark = "FALSE" if o.false_errors or o.follow_ons else (
            "ok" if o.agrees else ("symb" if o.symbolic else "miss"))
        jax = f"JAX {o.jax[0]}: {o.jax[1][:110]}" if o.jax else "JAX accepts"
        lines.append(f"{mark:5} {o.mutation.id:42} {jax}")
        lines += [f"{'':48} JAX {j[0]}: {j[1][:110]} (another entry)" for j in o.jax_all[1:] if j != o.jax]
        for e in o.ours:
            extra = " (FOLLOWS JAX's first error)" if e in o.follow_ons else (
                " (beyond JAX's first error)" if e in o.beyond else "")
            lines.append(f"{'':48} ours {e.line}/{e.blame_line}: {e.code} {e.message[:100]}{extra}")
    hit, rejected = recall(outcomes)
    lines.append(f"\nJAX rejects {rejected} of {len(outcomes)} tokamax mutants; wgmma-lsp reports {hit} of "
                 f"them at JAX's line with JAX's message ({hit / max(1, rejected):.0%}); "
                 f"mutants with a false error: {sum(bool(o.false_errors) for o in outcomes)}; "
                 f"with an error after JAX's first: {sum(bool(o.follow_ons) for o in outcomes)}; "
                 f"accepted mutants with an error from us: "
                 f"{sum(1 for o in outcomes if not o.rejected and o.ours)}")
    return "\n".join(lines)


assert {m.file for m in MUTATIONS} <= set(ENTRIES)

if __name__ == "__main__":
    print(report(run_all(sys.argv[1:])))

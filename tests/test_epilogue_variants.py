"""A kernel author's epilogue, written the ways people write it, checked against JAX.

One tile of `wgmma` into an accumulator, then its value (scaled or not, cast to the output's
dtype) stored to an SMEM buffer (untransformed, padded, or tiled and swizzled; then copied out) or
straight to the GMEM output (whole or a slice), under Lane and Warpgroup semantics, for float32,
bfloat16 and float8 outputs: 112 kernels, each traced and lowered by the installed JAX
(`jax_oracle.trace_file`) and analysed by wgmma-lsp. Every error wgmma-lsp reports, JAX raises,
at that line (or, kernel-level, at the launch) with that message; every transfer-plan error JAX
raises (WG121), wgmma-lsp reports. (JAX 0.12's Warpgroup tiling of a padded untransformed SMEM
buffer, "Stride 72 is not divisible by 64 ...", is raised by JAX and not modelled: silence.)
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from jax_oracle import trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.rules.transfer_plan import RULE as TRANSFER_PLAN

TEMPLATE = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

OP_TF = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
OUT_TF = (plgpu.TilingTransform((8, {swizzle_cols})), plgpu.SwizzleTransform(128))


def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
  plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
  plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
  plgpu.barrier_wait(barrier)

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    {store}

  pl.run_scoped(body, plgpu.ACC((64, {n}), jnp.float32))
  {epilogue}


def run(a, b):
  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((64, {cols}), {dtype}),
      scratch_types=[
          plgpu.SMEM((64, 64), jnp.float16, transforms=OP_TF),
          plgpu.SMEM((64, {n}), jnp.float16, transforms=OP_TF),
          plgpu.SMEM((64, {cols}), {dtype}{out_transforms}),
          plgpu.Barrier(num_arrivals=2),
      ],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.{semantics}),
  )(a, b)

# wgmma-lsp: trace run(f16[64,64], f16[64,{n}])
'''

BITS = {"jnp.float32": 32, "jnp.bfloat16": 16, "jnp.float8_e4m3fn": 8}
COPY_OUT = "plgpu.commit_smem()\n  plgpu.copy_smem_to_gmem(o_smem, o_gmem)\n  plgpu.wait_smem_to_gmem(0)"


def variant(semantics: str, n: int, dtype: str, target: str, pad: int, scale: bool) -> str:
    value = f"(acc_ref[...]{' * 0.5' if scale else ''}).astype(o_gmem.dtype)"
    ref = {"smem": "o_smem", "smem_tf": "o_smem", "gmem": "o_gmem"}[target]
    if pad:
        ref = f"{ref}.at[:, pl.ds(0, {n})]"
    return TEMPLATE.format(
        swizzle_cols=128 * 8 // BITS[dtype], store=f"{ref}[...] = {value}", n=n, cols=n + pad, dtype=dtype,
        epilogue=COPY_OUT if target.startswith("smem") and not pad else "pass",
        out_transforms=", transforms=OUT_TF" if target == "smem_tf" else "", semantics=semantics)


CASES = [(sem, n, dtype, target, pad, scale)
         for sem, n, dtype, target, pad, scale in itertools.product(
             ("Lane", "Warpgroup"), (64, 128), ("jnp.float32", "jnp.bfloat16", "jnp.float8_e4m3fn"),
             ("smem", "smem_tf", "gmem"), (0, 8), (False, True))
         if not (target == "smem_tf" and pad)
         and not (target == "smem_tf" and n * BITS[dtype] < 1024)]  # (a swizzle the tile cannot take)


def _id(case: tuple) -> str:
    sem, n, dtype, target, pad, scale = case
    return f"{sem}-{n}-{dtype.split('.')[-1]}-{target}{'-pad' if pad else ''}{'-scaled' if scale else ''}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_epilogue_as_jax(case: tuple, tmp_path: Path) -> None:
    source = variant(*case)
    path = tmp_path / "epilogue.py"
    path.write_text(source)
    launch = next(i for i, text in enumerate(source.splitlines(), 1) if "plgpu.kernel(" in text)
    jax = {(v.line if v.line is not None else launch, v.message.rstrip())
           for v in trace_file(path, lower=True) if v.message is not None}
    analysis = analyze(source, str(path))
    ours = {(f.blame_line + 1, strip_context_note(f.message).rstrip()) for f in analysis.findings
            if f.certain}
    shown = [d for d in diagnostics(analysis) if d.severity in (Severity.ERROR, Severity.WARNING)]
    assert ours <= jax, f"reported, and JAX does not raise it there: {ours - jax}"
    assert all(d.severity == Severity.ERROR for d in shown)
    plans = {(line, msg) for line, msg in jax if msg in _transfer_plan_messages()}
    assert plans <= ours, f"JAX raises, and wgmma-lsp does not report it: {plans - ours}"


def _transfer_plan_messages() -> set[str]:
    return {m.strip().replace("{transfer_bytes}", str(b)) for m in TRANSFER_PLAN.template.split(" / ")
            for b in (1, 2)}

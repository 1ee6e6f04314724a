"""JAX stops at its first error, in every combination of a tuning loop.

A tuning loop traces one configuration after another. Once one of them may have raised (the
loop's `raise`, or an error nothing catches), what follows in `main()` runs only on the paths
where it did not: every later combination is uncertain, and its findings are warnings, named by
their configuration. But within a combination JAX still stops at its first error: a store after
a `wgmma` that raised is never traced, in that combination, whatever the earlier ones did.

Here the accumulator is 64, 128 or 256 columns wide against a 64x128 product. JAX raises the
wgmma's shape error for 64 and 256, and for 128 the store of the float32 accumulator into the
bfloat16 output (checked below, one trace per width). The analysis reports the store for 128
only: for 256 it would follow the wgmma's error (it did, as a warning, before runs were judged
from their own start). The same with a handler that skips every configuration JAX rejects (the
store was reported for 64 and 256 too), and with one that skips only those that exceed shared
memory and raises the rest, as jax's own tuning loops do.
"""

from __future__ import annotations

import pytest
from jax_oracle import _blamed_line, _load, kernel_keywords

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.sweep_budget import sweep_mode

SOURCE = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def matmul(a, b, acc_n):
  def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, a_smem, b_smem)
      o_smem[...] = acc_ref[...]

    pl.run_scoped(scope, plgpu.ACC((64, acc_n), jnp.float32))

  transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
  return plgpu.kernel(
      body,
      {out}=jax.ShapeDtypeStruct((64, 128), jnp.bfloat16),
      {scratch}=[
          plgpu.SMEM((64, 64), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((64, 128), jnp.bfloat16, transforms=transforms),
          plgpu.SMEM((64, 128), jnp.bfloat16, transforms=transforms),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(a, b)


def main():
  a = jax.ShapeDtypeStruct((64, 64), jnp.bfloat16)
  b = jax.ShapeDtypeStruct((64, 128), jnp.bfloat16)
  for acc_n in (64, 128, 256):
{loop_body}


if __name__ == "__main__":
  main()
'''
PLAIN = '''\
    jax.jit(matmul, static_argnums=2).trace(a, b, acc_n)'''
SKIPPING = '''\
    try:
      jax.jit(matmul, static_argnums=2).trace(a, b, acc_n)
    except ValueError:
      continue'''
RERAISING = '''\
    try:
      jax.jit(matmul, static_argnums=2).trace(a, b, acc_n)
    except ValueError as e:
      if "exceeds available shared memory" in e.args[0]:
        continue
      raise'''
WIDTHS = (64, 128, 256)


def source(loop_body: str) -> str:
    pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    return SOURCE.format(loop_body=loop_body, **kernel_keywords())


def line_of(src: str, text: str) -> int:
    """1-based."""
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def jax_first_errors(src: str, tmp_path) -> dict[int, int]:
    """acc_n -> the line of the kernel file JAX's trace raises at."""
    import jax
    import jax.numpy as jnp

    path = tmp_path / "tuning_kernel.py"
    path.write_text(src)
    module = _load(path)
    a = jax.ShapeDtypeStruct((64, 64), jnp.bfloat16)
    b = jax.ShapeDtypeStruct((64, 128), jnp.bfloat16)
    out = {}
    for acc_n in WIDTHS:
        with pytest.raises(Exception) as raised:
            jax.jit(module.matmul, static_argnums=2).trace(a, b, acc_n)
        out[acc_n] = _blamed_line(raised.value, path)
    return out


def reported(src: str) -> dict[int, list[int]]:
    """acc_n -> the lines the analysis reports an error or warning at in that combination."""
    with sweep_mode("all"):
        analysis = analyze(src, "tuning.py")
    out: dict[int, list[int]] = {n: [] for n in WIDTHS}
    for f in analysis.findings:
        for ctx in f.contexts:
            bindings = dict(ctx.bindings) if ctx is not None else {}
            if "acc_n" in bindings:
                out[int(bindings["acc_n"])].append(f.span.line + 1)
    return {n: sorted(set(lines)) for n, lines in out.items()}


@pytest.mark.parametrize("loop_body", [PLAIN, SKIPPING, RERAISING], ids=["plain", "skipping", "reraising"])
def test_each_combination_reports_jax_first_error_and_nothing_after_it(loop_body: str, tmp_path) -> None:
    src = source(loop_body)
    wgmma, store = line_of(src, "plgpu.wgmma("), line_of(src, "o_smem[...] = acc_ref[...]")
    assert jax_first_errors(src, tmp_path) == {64: wgmma, 128: store, 256: wgmma}
    assert reported(src) == {64: [wgmma], 128: [store], 256: [wgmma]}


def test_jax_hopper_matmul_with_swapped_accumulator_sizes_reports_nothing_after_the_wgmma(tmp_path) -> None:
    """jax's own hopper_matmul_mgpu.py (its main() tunes over 48 configurations; a shape error
    ends main()), the accumulator's sizes swapped: JAX's trace of a non-square tile raises at
    the wgmma, in the pipeline's body, which runs (`eval_pipeline`) before the epilogue's
    stores; every combination analysed (`wgmma-lsp check` and the editor once the document
    settles) reports the wgmma and nothing in the epilogue (a warning at its first store
    followed the wgmma's error there)."""
    from shipped_harness import apply_shims, trace_entries
    from shipped_mutations import MUTATIONS, kernel_dir

    mutation = next(m for m in MUTATIONS if m.id == "hopper_matmul:acc-sizes-swapped")
    path = kernel_dir() / mutation.file
    src = mutation.apply(path.read_text())
    harnessed = tmp_path / mutation.file
    harnessed.write_text(apply_shims(src) + "\n# wgmma-lsp: trace functools.partial(matmul, config=TuningConfig("
                         "tile_m=128, tile_n=64, tile_k=64, max_concurrent_steps=4))(f16[512,512], f16[512,512], None)\n")
    (verdict,) = trace_entries(harnessed)
    assert verdict.message is not None and "Incompatible shapes" in verdict.message
    wgmma = verdict.line
    assert wgmma is not None and "plgpu.wgmma(" in src.splitlines()[wgmma - 1]
    with sweep_mode("all"):
        analysis = analyze(src, str(path))
    assert {f.span.line + 1 for f in analysis.findings} == {wgmma}

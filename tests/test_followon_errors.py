"""JAX stops at its first error: what would follow it on the same run is never raised, and the
analyzer reports it no more (wgmma_lsp/interpret/followon.py). Each case is checked against real
JAX on the CPU (tests/jax_oracle.py, tests/shipped_harness.py, tests/race_oracle.py): the errors
reported are exactly what JAX raises, per entry point. (A second WG011 in one kernel, where
JAX's lowering stops at the first: tests/fixtures/lowering_kernel/wgmma_acc_dtype_twice.py.)
"""

from __future__ import annotations

import sys
from pathlib import Path

from jax_oracle import trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from race_oracle import detect  # noqa: E402
from shipped_harness import HARNESS_MARK, apply_shims, first_line, kernel_dir, trace_entries  # noqa: E402
from shipped_mutations import our_errors  # noqa: E402


def _shown(source: str, path: Path, severity: Severity = Severity.ERROR) -> set[tuple[int, str, str]]:
    return {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip())
            for d in diagnostics(analyze(source, str(path))) if d.severity == severity}


def _agrees(tmp_path: Path, name: str, source: str, lines: set[int]):
    """`source` written as `name`: JAX raises from `lines` (one error per entry point that
    fails), and our errors are exactly JAX's (line and message), with no warning. The analysis."""
    path = tmp_path / name
    path.write_text(source)
    raised = {(v.line, v.message.rstrip()) for v in trace_file(path) if v.message is not None}
    assert {line for line, _ in raised} == lines
    assert {(line, msg) for line, _, msg in _shown(source, path)} == raised
    assert _shown(source, path, Severity.WARNING) == set()
    return analyze(source, str(path))


# -- jax's hopper matmul with its accumulator's sizes swapped -------------------------------------

_ACC = "acc_ref=plgpu.ACC((tile_m, tile_n), jnp.float32)"
_CONFIG = "TuningConfig(tile_m=128, tile_n=64, tile_k=64, max_concurrent_steps=4)"


def test_hopper_matmul_with_its_accumulator_swapped_gets_only_jaxs_error(tmp_path: Path) -> None:
    """The pipeline's wgmma fails to trace (WG005, its line 216 in jax 0.10 and 0.12); the
    epilogue that would store the (64, 128) accumulator into (64, 64) tiles (WG056, above it in
    the file, below it in the run) is never traced."""
    source = (kernel_dir() / "hopper_matmul_mgpu.py").read_text()
    assert source.count(_ACC) == 1
    source = apply_shims(source.replace(_ACC, "acc_ref=plgpu.ACC((tile_n, tile_m), jnp.float32)"))
    source = (f"{source.rstrip()}\n\n{HARNESS_MARK}\n# wgmma-lsp: trace functools.partial(matmul, "
              f"config={_CONFIG})(f16[512,512], f16[512,512], None)\n")
    path = tmp_path / "hopper_matmul_mgpu.py"
    path.write_text(source)
    verdicts = trace_entries(path, lower=True)
    assert [v.stage for v in verdicts] == ["trace"]
    jax = (verdicts[0].line, first_line(verdicts[0].message))
    assert jax[1].startswith("Incompatible shapes for matrix multiplication")
    assert [(e.line, first_line(e.message)) for e in our_errors(source, str(path))] == [jax]


# -- a finding several contexts share keeps the contexts that reach it ----------------------------

SHARED = '''\
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, o_ref, cast):
  if cast:
    o_ref[...] = x_ref[...].astype(jnp.bfloat16)
  o_ref[...] = x_ref[...].reshape(32, 64)


def f(x, cast):
  return plgpu.kernel(functools.partial(body, cast=cast), out_type=jax.ShapeDtypeStruct((64, 32), jnp.float32))(x)

# wgmma-lsp: trace f(f32[64,32], True)
# wgmma-lsp: trace f(f32[64,32], False)
'''


def test_an_error_after_jaxs_first_is_dropped_for_that_context_only(tmp_path: Path) -> None:
    """With `cast`, the store of bfloat16 fails first (WG057) and the reshaped store after it is
    never traced; without it, the reshaped store fails (WG056). Each is reported for the entry
    JAX raises it from, and the second names its context."""
    analysis = _agrees(tmp_path, "shared.py", SHARED, {9, 10})
    [later] = [f for f in analysis.findings if f.rule.code == "WG056"]
    assert [c.label() for c in later.contexts] == ["from entry point `f(f32[64,32], False)` at line 17"]


def test_the_same_run_twice_reports_jaxs_first_error_only(tmp_path: Path) -> None:
    """Two entry points that make the same call: the second replays the first's memoised run,
    whose first error ends it (the replay ends its own context too)."""
    source = SHARED.replace("f(f32[64,32], False)", "f(f32[64,32], True)")
    [first] = _agrees(tmp_path, "twice.py", source, {9}).findings
    assert len(first.contexts) == 2 and first.certain


def test_a_replay_that_may_be_caught_reports_nothing_after_the_calls_own_first_error(tmp_path: Path) -> None:
    """The memoised run of `f` ended at its own first error: a replay of it inside a `try`
    (whose handler may catch that error, so it is only possible there) still never reaches the
    reshaped store. JAX: the first entry raises the cast's error, the second catches it."""
    source = SHARED.replace("# wgmma-lsp: trace f(f32[64,32], False)\n",
                            "# wgmma-lsp: trace caller(f32[64,32])\n") + (
        "\n\ndef caller(x):\n  try:\n    return f(x, True)\n  except ValueError:\n    return None\n")
    _agrees(tmp_path, "caught.py", source, {9})


MEMOISED = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

OUT = jax.ShapeDtypeStruct((64, 32), jnp.float32)


def cast_body(x_ref, o_ref):
  o_ref[...] = x_ref[...].astype(jnp.bfloat16)


def reshape_body(x_ref, o_ref):
  o_ref[...] = x_ref[...].reshape(32, 64)


def g(x):
  return plgpu.kernel(reshape_body, out_type=OUT)(x)


def h(x):
  y = plgpu.kernel(cast_body, out_type=OUT)(x)
  return g(y)

# wgmma-lsp: trace h(f32[64,32])
# wgmma-lsp: trace g(f32[64,32])
'''


def test_a_call_run_after_jaxs_error_keeps_its_findings_for_other_runs(tmp_path: Path) -> None:
    """`h` fails in its first kernel (WG057), so the `g` it calls next is never traced there;
    `g` called on its own fails in its kernel (WG056). The second entry replays the memoised run
    of `g` made inside the first: what it dropped there is reported here."""
    [later] = [f for f in _agrees(tmp_path, "memoised.py", MEMOISED, {9, 13}).findings
               if f.rule.code == "WG056"]
    assert [c.label() for c in later.contexts] == ["from entry point `g(f32[64,32])` at line 25"]


LOWERED_ELSEWHERE = '''\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

T = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def kernel(o_gmem, cast):
  def body(acc_ref, a_smem, b_smem):
    plgpu.wgmma(acc_ref, a_smem, b_smem)
    o_gmem[...] = acc_ref[...].astype(jnp.bfloat16 if cast else o_gmem.dtype)

  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.bfloat16), plgpu.SMEM((64, 64), jnp.float16, transforms=T),
                plgpu.SMEM((64, 128), jnp.float16, transforms=T))


def f(cast):
  return plgpu.kernel(functools.partial(kernel, cast=cast), out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32))()

# wgmma-lsp: trace f(False)
# wgmma-lsp: trace f(True)
'''


def test_a_lowering_error_found_before_is_not_claimed_where_tracing_fails_after_it(tmp_path: Path) -> None:
    """The bfloat16 accumulator fails to lower (WG011: Lane's check in JAX 0.10, the op's verifier
    in 0.12); with `cast`, the store after it fails to trace first (WG057), so that kernel is never
    lowered: the WG011 the first entry found is not claimed for the second."""
    path = tmp_path / "lowered_elsewhere.py"
    path.write_text(LOWERED_ELSEWHERE)
    lowered = [v for v in trace_file(path, lower=True) if v.message is not None]
    assert [v.line for v in lowered] == [12, 13]
    ours = sorted(_shown(LOWERED_ELSEWHERE, path))
    assert [(line, code) for line, code, _ in ours] == [(12, "WG011"), (13, "WG057")]
    assert all(first_line(v.message) in msg for v, (_, _, msg) in zip(lowered, ours))
    [lowering] = [f for f in analyze(LOWERED_ELSEWHERE, str(path)).findings if f.rule.code == "WG011"]
    assert [c.label() for c in lowering.contexts] == ["from entry point `f(False)` at line 22"]


# -- a race in a kernel whose tracing fails: the kernel never runs --------------------------------

RACY = Path(__file__).parent / "fixtures" / "races" / "racy" / "consumer_no_wait.py"
_WG = '  wg = jax.lax.axis_index("wg")\n'


def test_no_race_is_reported_in_a_kernel_whose_tracing_fails(tmp_path: Path) -> None:
    """tests/fixtures/races/racy/consumer_no_wait.py (thread 1 reads the SMEM a copy is still
    loading: WG200, tests/test_races.py) with a store JAX rejects first, at the top of the body:
    JAX's race detector never runs the kernel, it raises the store's error."""
    racy = RACY.read_text()
    assert racy.count(_WG) == 1 and {code for _, code, _ in _shown(racy, RACY, Severity.WARNING)} == {"WG200"}
    source = racy.replace(_WG, _WG + "  out[...] = jnp.zeros(SHAPE, jnp.bfloat16)\n")
    line = source.splitlines().index("  out[...] = jnp.zeros(SHAPE, jnp.bfloat16)") + 1
    path = tmp_path / "racy_after_an_error.py"
    path.write_text(source)
    detected = detect(path)
    assert detected.races == [] and detected.error is not None
    errors = _shown(source, path)
    assert [(ln, code) for ln, code, _ in errors] == [(line, "WG057")]
    assert first_line(detected.error.split(": ", 1)[1]) == next(iter(errors))[2]
    assert _shown(source, path, Severity.WARNING) == set()

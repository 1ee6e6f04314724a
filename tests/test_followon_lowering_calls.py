"""A lowering error ends JAX's run when the call it is lowered in returns to untraced code.

An eager kernel call (`plgpu.kernel(...)(x)` in a test function) binds its primitive, which JAX
lowers and compiles at once: the lowering error is raised from that call, and nothing after it
runs. A jitted function is traced whole before it is lowered: a trace error in a later kernel of
the same function is raised instead of an earlier kernel's lowering error. Checked against real
JAX on this CPU-only machine by making eager dispatch lower for CUDA (`_cuda_lowering`): the
analysis reports the second kernel's trace error only where JAX raises it
(wgmma_lsp/interpret/followon.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from jax_oracle import _blamed_line, _load, jax_message, kernel_keywords
from shipped_harness import first_line

from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.sweep_budget import sweep_mode

SOURCE = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def launch(body, a, b):
  return plgpu.kernel(
      body,
      {out}=jax.ShapeDtypeStruct((64, 128), jnp.bfloat16),
      {scratch}=[
          plgpu.SMEM((64, 64), jnp.float16, transforms=TRANSFORMS),
          plgpu.SMEM((64, 128), jnp.float16, transforms=TRANSFORMS),
          plgpu.SMEM((64, 128), jnp.bfloat16, transforms=TRANSFORMS),
          plgpu.Barrier(num_arrivals=2),
      ],
  )(a, b)


def bf16_accumulator(a, b):
  def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, a_smem, b_smem)
      o_smem[...] = acc_ref[...]

    pl.run_scoped(scope, plgpu.ACC((64, 128), jnp.bfloat16))
  return launch(body, a, b)


def narrow_accumulator(a, b):
  def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)

    def scope(acc_ref):
      plgpu.wgmma(acc_ref, a_smem, b_smem)
      o_smem[...] = acc_ref[...].astype(jnp.bfloat16)

    pl.run_scoped(scope, plgpu.ACC((64, 64), jnp.float32))
  return launch(body, a, b)


def both(a, b):
  bf16_accumulator(a, b)
  return narrow_accumulator(a, b)


def jit_call_then_eager(a, b):
  jax.jit(bf16_accumulator)(a, b)
  return narrow_accumulator(a, b)


def test_eager():
  a = jnp.zeros((64, 64), jnp.float16)
  b = jnp.zeros((64, 128), jnp.float16)
  both(a, b)


def test_jit_call_then_eager():
  a = jnp.zeros((64, 64), jnp.float16)
  b = jnp.zeros((64, 128), jnp.float16)
  jit_call_then_eager(a, b)


def test_jit_call_then_eager_again():
  a = jnp.zeros((64, 64), jnp.float16)
  b = jnp.zeros((64, 128), jnp.float16)
  jit_call_then_eager(a, b)


def test_jitted():
  a = jnp.zeros((64, 64), jnp.float16)
  b = jnp.zeros((64, 128), jnp.float16)
  jax.jit(both)(a, b)


if __name__ == "__main__":
  a = jnp.zeros((64, 64), jnp.float16)
  b = jnp.zeros((64, 128), jnp.float16)
  both(a, b)
'''
TESTS = ("test_eager", "test_jit_call_then_eager", "test_jit_call_then_eager_again", "test_jitted")


@contextlib.contextmanager
def _cuda_lowering() -> Iterator[None]:
    """Eager dispatch (a primitive's own jit, or a jitted function's call) lowers for the
    default backend, the CPU here: lower for CUDA instead, as on a GPU (compiling would fail
    after it; a lowering error is raised before)."""
    from jax._src import pjit

    original = pjit._resolve_and_lower

    def for_cuda(*args, **kwargs):
        if kwargs.get("lowering_platforms") is None:
            kwargs["lowering_platforms"] = ("cuda",)
        return original(*args, **kwargs)

    pjit._resolve_and_lower = for_cuda
    try:
        yield
    finally:
        pjit._resolve_and_lower = original


def _source() -> str:
    pytest.importorskip("jax.experimental.pallas.mosaic_gpu")
    pytest.importorskip("jax._src.pjit")
    return SOURCE.format(**kernel_keywords())


def _line_of(src: str, text: str) -> int:
    """1-based."""
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def _jax_first_errors(src: str, tmp_path: Path) -> dict[str, tuple[int | None, str]]:
    """Each test function -> (the line JAX blames, the first line of its message)."""
    path = tmp_path / "lowering_calls.py"
    path.write_text(src)
    module = _load(path)
    out = {}
    for name in TESTS:
        with _cuda_lowering(), pytest.raises(Exception) as raised:
            getattr(module, name)()
        out[name] = (_blamed_line(raised.value, path), first_line(jax_message(raised.value)))
    return out


def _reported(src: str, tmp_path: Path) -> dict[str, set[int]]:
    """Each test function -> the lines the analysis reports in its context."""
    with sweep_mode("all"):
        analysis = analyze(src, str(tmp_path / "lowering_calls.py"))
    out: dict[str, set[int]] = {name: set() for name in TESTS}
    for f in analysis.findings:
        for ctx in f.contexts:
            for name in TESTS:
                if ctx is not None and ctx.origin == f"{name}()":
                    out[name].add(f.span.line + 1)
    return out


def test_a_lowering_error_ends_the_run_when_its_call_returns_to_untraced_code(tmp_path: Path) -> None:
    src = _source()
    lowering = _line_of(src, "pl.run_scoped(scope, plgpu.ACC((64, 128), jnp.bfloat16))") - 3
    tracing = _line_of(src, "pl.run_scoped(scope, plgpu.ACC((64, 64), jnp.float32))") - 3
    assert "plgpu.wgmma(" in src.splitlines()[lowering - 1] and "plgpu.wgmma(" in src.splitlines()[tracing - 1]
    jax = _jax_first_errors(src, tmp_path)
    assert {name: line for name, (line, _) in jax.items()} == {
        "test_eager": lowering, "test_jit_call_then_eager": lowering, "test_jit_call_then_eager_again": lowering,
        "test_jitted": tracing}
    reported = _reported(src, tmp_path)
    # An eager kernel call, and a jitted function's call, raise their lowering error as they
    # return: the kernel after them is never traced.
    assert reported["test_eager"] == {lowering}
    assert reported["test_jit_call_then_eager"] == {lowering}
    # The same calls again: the kernel's function, memoised inside the jitted call, is replayed
    # there, and its lowering error ends the run again when the jitted call returns.
    assert reported["test_jit_call_then_eager_again"] == {lowering}
    # One jitted function: its second kernel's trace error is raised first, and reported (the
    # first kernel's lowering error is claimed there too: the analysis lowers each kernel as it
    # is traced).
    assert tracing in reported["test_jitted"]
    # Same messages as JAX's (the diagnostic quotes JAX's first line: 0.12's verifier text).
    shown = {(d.span.line + 1, strip_context_note(d.message)) for d in diagnostics(analyze(src, "lowering_calls.py"))}
    for line, message in jax.values():
        assert any(at == line and message in text for at, text in shown), (line, message, shown)


def test_the_main_block_is_untraced_code_too(tmp_path: Path) -> None:
    """The `__main__` block makes the same eager calls as `test_eager`: only the first kernel's
    lowering error is reported for it."""
    src = _source()
    lowering = _line_of(src, "pl.run_scoped(scope, plgpu.ACC((64, 128), jnp.bfloat16))") - 3
    with sweep_mode("all"):
        analysis = analyze(src, str(tmp_path / "lowering_calls.py"))
    lines = {f.span.line + 1 for f in analysis.findings for ctx in f.contexts
             if ctx is not None and "__main__" in ctx.origin}
    assert lines == {lowering}


def test_inside_an_unknown_transformation_nothing_ends(tmp_path: Path) -> None:
    """Under `jax.vmap` (which the analysis does not take for a call JAX lowers before it
    returns), the later kernel's error stays reported, as before."""
    src = _source().replace("  jax.jit(both)(a, b)\n", "  jax.vmap(both)(a[None], b[None])\n")
    tracing = _line_of(src, "pl.run_scoped(scope, plgpu.ACC((64, 64), jnp.float32))") - 3
    assert tracing in _reported(src, tmp_path)["test_jitted"]


def test_a_test_function_that_may_be_traced_ends_nothing(tmp_path: Path) -> None:
    """A test function under a decorator other than a test framework's (`@jax.jit`: traced
    whole, then lowered) is not taken for untraced code: the later kernel's error stays."""
    src = _source().replace("def test_eager():", "@jax.jit\ndef test_eager():")
    tracing = _line_of(src, "pl.run_scoped(scope, plgpu.ACC((64, 64), jnp.float32))") - 3
    assert tracing in _reported(src, tmp_path)["test_eager"]

"""The interpreter's rules of evidence: what counts as proven, what only as possible."""

from __future__ import annotations

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.model import Severity

HEADER = """\
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def severities(source: str) -> list[tuple[str, Severity]]:
    return [(d.code, d.severity) for d in diagnostics(analyze(HEADER + source))]


def test_code_after_a_certain_raise_never_runs() -> None:
    assert severities("""
def kernel(a_ref):
  def body(acc_ref):
    raise NotImplementedError("not yet")
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == []


def test_code_after_a_conditional_raise_is_only_possible() -> None:
    assert severities("""
def kernel(a_ref, flag):
  def body(acc_ref):
    if flag:
      raise NotImplementedError("not yet")
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.WARNING)]


def test_a_return_inside_a_loop_makes_the_rest_uncertain() -> None:
    assert severities("""
def kernel(a_ref, n):
  def body(acc_ref):
    for i in range(n):
      if i == 3:
        return
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.WARNING)]


def test_rebound_globals_are_unknown() -> None:
    source = """
TILE = 64

def configure(tile):
  global TILE
  TILE = tile

def kernel(a_ref):
  def body(acc_ref):
    acc_ref[...] = jnp.zeros((64, 128), jnp.float32)
  pl.run_scoped(body, plgpu.ACC((TILE, 128)))
"""
    assert severities(source) == []  # TILE may be 32 by the time the kernel is traced
    assert severities(source.replace("  global TILE\n", "")) == []  # a local TILE: no error either


def test_unknown_apis_may_never_call_their_callbacks() -> None:
    assert severities("""
import mylib

def kernel(a_ref):
  def body(acc_ref):
    def callback():
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    mylib.maybe_call(callback)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.WARNING)]


def test_cond_branches_are_both_traced() -> None:
    assert severities("""
import jax

def kernel(a_ref):
  def body(acc_ref):
    def yes():
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    def no():
      pass
    jax.lax.cond(a_ref[0, 0] > 0, yes, no)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.ERROR)]


def test_pipeline_blocks_are_shaped_by_their_block_specs() -> None:
    source = HEADER + """
import jax
def kernel(a_gmem, b_gmem, o_gmem):
  def step(indices, a_smem, b_smem):
    x = a_smem[...]
  plgpu.emit_pipeline(step, grid=(4,), in_specs=[plgpu.BlockSpec((64, 32), lambda k: (0, k)),
                                                 plgpu.BlockSpec((32, 128), lambda k: (k, 0))])(a_gmem, b_gmem)

def f(a, b):
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32))(a, b)

# wgmma-lsp: trace f(bf16[64,128], bf16[128,128])
"""
    analysis = analyze(source)
    line = source.splitlines().index("    x = a_smem[...]")
    assert "Ref<smem>{bfloat16[64,32]}" in hover(analysis, line, 9).markdown
    assert "`bfloat16[64,32]`" in hover(analysis, line, 4).markdown


def test_a_short_while_loop_with_known_tests_runs_as_python_runs_it() -> None:
    """`while rows > 0: rows //= 2` (ragged_dot_mgpu's store loop): each iteration sees its own
    values; a test that is not known falls back to the joined loop state."""
    analysis = analyze(HEADER + """
import math
rows = 5
sizes = ()
while rows > 0:
  size = 1 << int(math.log2(rows))
  rows //= 2
  sizes = sizes + (size,)
n_sizes = sizes
never = 1
while rows > 0:
  never = 2
seen = never
""")
    values = {r.name: r.values for r in analysis.records.values() if r.name in ("n_sizes", "seen")}
    (sizes,) = values["n_sizes"]
    assert [getattr(v, "value", None) for v in sizes.items] == [4, 2, 1]
    assert [getattr(v, "value", None) for v in values["seen"]] == [1]


def test_a_while_loop_with_an_unknown_test_is_joined() -> None:
    analysis = analyze(HEADER + """
def f(flag):
  x = 1
  while flag:
    x = 2
  y = x
""")
    (y,) = [r.values for r in analysis.records.values() if r.name == "y"]
    assert all(getattr(v, "value", None) not in (1, 2) for v in y)  # neither 1 nor 2 is proven


def test_shard_map_bodies_see_the_local_shape_where_the_spec_does_not_split() -> None:
    """Inside `jax.shard_map` a dimension whose PartitionSpec entry is None keeps its global
    size (JAX's local aval); a split one is divided by the mesh axis' size."""
    analysis = analyze(HEADER + """
import jax
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((2,), ('x',))
def body(a, b):
  local_a = a
  local_b = b
  return a
x = jnp.zeros((512, 256), jnp.float16)
jax.shard_map(body, mesh=mesh, in_specs=(P(None, None), P('x')), out_specs=P())(x, x)
""")
    shown = {r.name: [v.aval() if hasattr(v, "aval") else str(v) for v in r.values]
             for r in analysis.records.values()
             if r.name in ("local_a", "local_b")}
    assert shown["local_a"] == ["float16[512,256]"]
    assert shown["local_b"] == ["float16[256,256]"]  # split in two along x


def test_axis_size_inside_a_shard_map_body_is_the_meshs() -> None:
    analysis = analyze(HEADER + """
import jax
from jax import lax
P = jax.sharding.PartitionSpec
mesh = jax.make_mesh((2, 4), ('x', 'y'))
def body(a):
  nx = lax.axis_size('x')
  nxy = lax.axis_size(('x', 'y'))
  nz = lax.axis_size('z')
  return a
x = jnp.zeros((512, 256), jnp.float16)
jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P())(x)
outside = lax.axis_size('x')
""")
    got = {r.name: [getattr(v, "value", None) for v in r.values] for r in analysis.records.values()
           if r.name in ("nx", "nxy", "nz", "outside")}
    assert got["nx"] == [2] and got["nxy"] == [8]
    assert got["nz"] == [None] and got["outside"] == [None]


# The allocation comes from the caller, so the kernel alone proves nothing: the call inside
# `try` is what reaches the error.
_SMEM_ACC_KERNEL = """
def kernel(a_ref, b_ref, alloc):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
  pl.run_scoped(body, alloc)

def run(a, b):
  try:
    {call}
  except {caught}:
    pass
"""
_SMEM_CALL = "kernel(a, b, plgpu.SMEM((64, 128), jnp.float32))"


def test_an_error_no_handler_catches_is_certain_inside_try() -> None:
    # JAX raises a TypeError for an SMEM accumulator: `except ValueError` does not catch it.
    source = _SMEM_ACC_KERNEL.format(call=_SMEM_CALL, caught="ValueError")
    assert ("WG003", Severity.ERROR) in severities(source)


def test_an_error_a_handler_may_catch_is_only_possible() -> None:
    for caught in ("TypeError", "Exception", "(ValueError, TypeError)", "SomeLibraryError"):
        source = _SMEM_ACC_KERNEL.format(call=_SMEM_CALL, caught=caught)
        assert ("WG003", Severity.WARNING) in severities(source), caught
        assert ("WG003", Severity.ERROR) not in severities(source), caught


def test_after_a_caught_error_the_rest_of_the_try_does_not_run() -> None:
    # The ValueError of the first store, raised on every path, is caught: the wgmma after it
    # never runs (JAX's trace stopped at the store; interpret/followon.py, `_TryScope.dead`).
    assert severities("""
def kernel(a_ref, b_ref):
  def body(acc_ref, smem_ref):
    try:
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
      plgpu.wgmma(smem_ref, a_ref, b_ref)
    except ValueError:
      pass
  pl.run_scoped(body, plgpu.ACC((64, 128)), plgpu.SMEM((64, 128), jnp.float32))
""") == [("WG001", Severity.WARNING)]


def test_after_an_error_caught_on_some_paths_the_rest_of_the_try_may_not_run() -> None:
    # The store raises only when `cast` is true: the wgmma after it may run (a warning).
    assert severities("""
def kernel(a_ref, b_ref, cast):
  def body(acc_ref, smem_ref):
    try:
      if cast:
        acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
      plgpu.wgmma(smem_ref, a_ref, b_ref)
    except ValueError:
      pass
  pl.run_scoped(body, plgpu.ACC((64, 128)), plgpu.SMEM((64, 128), jnp.float32))
""") == [("WG001", Severity.WARNING), ("WG003", Severity.WARNING)]


def test_a_tuning_loop_that_skips_rejected_configs_still_proves_a_trace_error() -> None:
    # As in jax's hopper_matmul_mgpu.py: the handler skips shared-memory overflows (a ValueError
    # at lowering) and re-raises the rest. The SMEM accumulator fails tracing with a TypeError,
    # which nothing catches, in the first configuration already.
    assert ("WG003", Severity.ERROR) in severities("""
def kernel(alloc, stages):
  def body(acc_ref, a_ref, b_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
  pl.run_scoped(body, alloc, plgpu.SMEM((64, 64), jnp.bfloat16), plgpu.SMEM((64, 128), jnp.bfloat16))

def main():
  for stages in (2, 4):
    try:
      kernel(plgpu.SMEM((64, 128), jnp.float32), stages)
    except ValueError as e:
      if "exceeds available shared memory" in str(e):
        continue
      raise

if __name__ == "__main__":
  main()
""")

"""Symbolic dtypes: a dtype that comes from what the user wrote (`x.dtype`, a `dtype` parameter,
`config.dtype`) is carried by that spelling and shown by it on hover; it never proves an error
(two different dtypes, one of them symbolic, are undecided; the same symbol is the same dtype),
while concrete dtypes that differ are still reported."""

from __future__ import annotations

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret import dtypes as T

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def _hover_at(source: str, needle: str, occurrence: int = 0) -> str:
    """The first line of the hover at the `occurrence`-th `needle` of the source."""
    text = HEADER + source
    analysis = analyze(text)
    seen = 0
    for i, line in enumerate(text.splitlines()):
        col = line.find(needle)
        while col >= 0:
            if seen == occurrence:
                h = hover(analysis, i, col)
                assert h is not None, f"no hover on {needle!r} (line {i + 1})"
                return h.markdown.splitlines()[0]
            seen += 1
            col = line.find(needle, col + 1)
    raise AssertionError(f"{needle!r} not found")


def _codes(source: str) -> list[tuple[str, Severity, str]]:
    return [(d.code, d.severity, d.message) for d in diagnostics(analyze(HEADER + source))]


# -- the dtype model ------------------------------------------------------------------------
def test_a_symbolic_dtype_equals_itself_only() -> None:
    x, y, f32 = T.SymDType("x.dtype"), T.SymDType("y.dtype"), T.DType("float32")
    assert T.same(x, T.SymDType("x.dtype")) is True
    assert T.same(x, y) is None
    assert T.same(x, f32) is None and T.same(f32, x) is None
    assert T.same(f32, T.DType("bfloat16")) is False
    assert T.same(f32, T.DType("float32", weak=True)) is True
    assert T.concrete(x) is None and T.concrete(f32) == f32


def test_promotion_keeps_a_symbol_only_with_itself() -> None:
    x = T.SymDType("x.dtype")
    assert T.result_type(x, T.SymDType("x.dtype")) == x
    assert T.result_type(x, T.SymDType("y.dtype")) is None
    assert T.result_type(x, T.DType("float32")) is None
    assert T.result_type(x, T.DType("int32", weak=True)) is None  # bool + 1 is int32
    assert T.canonicalize(x) == x
    assert str(x) == "x.dtype" and x != T.DType("x.dtype")


# -- hover ----------------------------------------------------------------------------------
SCOPED = """
def run(x, dtype, config):
  m, k = x.shape

  def body(a_smem, acc_ref, o_smem):
    a_smem[...] = jnp.zeros((m, k), x.dtype)
    z = jnp.zeros((m, k), dtype)
    c = jnp.zeros((m, k), config.dtype)
    w = a_smem[...] * 2
    s = a_smem[...] + x_like
    o_smem[...] = z

  x_like = jnp.ones((m, k), x.dtype)
  pl.run_scoped(body, plgpu.SMEM((m, k), x.dtype), plgpu.ACC((m, k)), plgpu.SMEM((m, k), dtype))
"""


def test_hover_spells_a_dtype_by_the_expression_the_user_wrote() -> None:
    assert "`Ref<smem>{x.dtype[m, k]}`" in _hover_at(SCOPED, "a_smem", 1)
    assert "`dtype[m, k]`" in _hover_at(SCOPED, "z =")
    assert "`config.dtype[m, k]`" in _hover_at(SCOPED, "c =")
    assert "`Ref<smem>{dtype[m, k]}`" in _hover_at(SCOPED, "o_smem", 1)
    assert "`Accumulator{float32[m, k]}`" in _hover_at(SCOPED, "acc_ref")


def test_arithmetic_on_one_symbolic_dtype_keeps_it() -> None:
    assert "`x.dtype[m, k]`" in _hover_at(SCOPED, "s =")
    # `x * 2`: a weak int promotes to x.dtype unless x is bool: not claimed
    assert "x.dtype" not in _hover_at(SCOPED, "w =")


def test_a_parameter_unpacked_by_shape_has_its_own_dtype() -> None:
    source = """
def f(a):
  m, k = a.shape
  b = a
  return b
"""
    assert "`a.dtype[m, k]`" in _hover_at(source, "b =")


def test_a_kernel_operand_known_by_name_holds_its_dtype() -> None:
    source = """
def f(x):
  def kernel(x_ref, o_ref):
    y = x_ref[...]
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((64, 64), jnp.float32),
                        in_specs=[pl.BlockSpec((64, 64), lambda i: (i, 0))])(x)
"""
    assert "{x.dtype[64,64]}`" in _hover_at(source, "x_ref", 1)  # JAX's spelling of known sizes


# -- no false errors ------------------------------------------------------------------------
def test_symbolic_dtypes_never_prove_a_dtype_error() -> None:
    source = """
def run(x, y, dtype):
  m, k = x.shape
  k2, n = y.shape

  def body(a_smem, b_smem, acc_ref, o_smem, p_smem):
    acc_ref[...] = jnp.zeros((m, n), dtype)           # accumulator (float32) <- dtype
    o_smem[...] = acc_ref[...].astype(jnp.float32)    # dtype <- float32
    o_smem[...] = jnp.zeros((m, n), y.dtype)          # dtype <- y.dtype
    p_smem[...] = jnp.zeros((m, n), x.dtype)          # same symbol: the same dtype
    plgpu.wgmma(acc_ref, a_smem, b_smem)              # lhs x.dtype, rhs y.dtype

  pl.run_scoped(body, plgpu.SMEM((m, k), x.dtype), plgpu.SMEM((k, n), y.dtype),
                plgpu.ACC((m, n)), plgpu.SMEM((m, n), dtype), plgpu.SMEM((m, n), x.dtype))
"""
    assert _codes(source) == []


def test_a_dtype_comparison_with_a_symbol_is_undecided() -> None:
    # `x.dtype == jnp.float32` is unknown: the raise may or may not happen, so the error after
    # it is only possible (a warning), not proven and not dropped.
    source = """
def run(x):
  def body(acc_ref):
    if x.dtype == jnp.float32:
      raise ValueError("float32 is not supported")
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
"""
    assert [(c, s) for c, s, _ in _codes(source)] == [("WG001", Severity.WARNING)]


def test_the_same_symbol_compares_equal() -> None:
    source = """
def run(x):
  def body(acc_ref):
    if x.dtype != x.dtype:
      raise ValueError("never")
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
"""
    assert [(c, s) for c, s, _ in _codes(source)] == [("WG001", Severity.ERROR)]


# -- concrete mismatches are still errors ---------------------------------------------------
def test_concrete_dtype_mismatches_are_still_reported_beside_symbolic_ones() -> None:
    source = """
def run(x, dtype):
  m, k = x.shape

  def body(acc_ref, o_smem):
    acc_ref[...] = jnp.zeros((m, k), dtype)                 # undecided: nothing
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)        # proven
    o_smem[...] = jnp.zeros((m, k), jnp.float32)            # undecided: nothing

  pl.run_scoped(body, plgpu.ACC((m, k)), plgpu.SMEM((m, k), x.dtype))
"""
    assert [(c, s) for c, s, _ in _codes(source)] == [("WG001", Severity.ERROR)]
    assert "Accumulator dtype float32 does not match value dtype bfloat16" in _codes(source)[0][2]


def test_a_concrete_store_dtype_mismatch_is_still_reported() -> None:
    source = """
def run(x):
  m, k = x.shape

  def body(o_smem, p_smem):
    o_smem[...] = jnp.zeros((m, k), jnp.float32)    # proven: bfloat16 ref
    p_smem[...] = jnp.zeros((m, k), jnp.float32)    # undecided: x.dtype ref

  pl.run_scoped(body, plgpu.SMEM((m, k), jnp.bfloat16), plgpu.SMEM((m, k), x.dtype))
"""
    codes = _codes(source)
    assert [(c, s) for c, s, _ in codes] == [("WG057", Severity.ERROR)]
    assert "Ref dtype: bfloat16. Value dtype: float32." in codes[0][2]


def test_an_smem_accumulator_is_reported_whatever_the_operand_dtype() -> None:
    # The accumulator's kind is wrong for any dtype the operands turn out to have.
    source = """
def run(x):
  def body(a_smem, b_smem, acc_smem):
    plgpu.wgmma(acc_smem, a_smem, b_smem)
  pl.run_scoped(body, plgpu.SMEM((64, 64), x.dtype), plgpu.SMEM((64, 64), x.dtype),
                plgpu.SMEM((64, 64), jnp.float32))
"""
    assert [c for c, _, _ in _codes(source)] == ["WG003"]


def test_checks_that_need_a_dtypes_width_leave_symbolic_dtypes_alone() -> None:
    # Swizzle/tiling fit, TMA copies, TMEM allocation and the SMEM budget all need the dtype's
    # width: with `x.dtype` they are undecided (no crash, no finding), as with an unknown dtype.
    source = """
def run(x, y_gmem):
  m, k = x.shape

  def body(a_smem, t_tmem, barrier):
    plgpu.copy_gmem_to_smem(y_gmem, a_smem, barrier)
    plgpu.barrier_wait(barrier)
    v = a_smem[...]

  pl.run_scoped(
      body,
      plgpu.SMEM((64, 64), x.dtype,
                 transforms=(plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))),
      plgpu.TMEM((128, 64), x.dtype),
      plgpu.Barrier(num_arrivals=1))
"""
    assert _codes(source) == []
    assert "`x.dtype[64,64]`" in _hover_at(source, "v =")
    # the same code with concrete dtypes reaches those checks: they do fire
    assert [c for c, _, _ in _codes(source.replace("x.dtype", "jnp.bfloat16"))] == ["WG013"]
    assert [c for c, _, _ in _codes(source.replace("x.dtype", "jnp.float32")
                                    .replace("SwizzleTransform(128)", "SwizzleTransform(64)"))] \
        == ["WG063"]

"""Sizes known only by name, through the arithmetic library code does on them: `pl.cdiv`,
`jnp.pad`, and the `if` that returns early when no padding is needed.

Each symbolic answer is checked against JAX: the same function, traced by `jax.eval_shape`
for several concrete sizes, has the shape the symbolic one evaluates to there."""

from __future__ import annotations


import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import path_equalities as P
from wgmma_lsp.interpret.dims import Sym

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
import jaxtyping
from jaxtyping import Array, Float
"""

PAD = """
def pad_dim_to(x, n, axis):
  if (padding := n - x.shape[axis]) == 0:
    return x
  if padding < 0:
    raise ValueError(f"Cannot pad {x.shape[axis]} to smaller size {n}")
  pad_width = [(0, 0)] * x.ndim
  pad_width[axis] = (0, padding)
  return jnp.pad(x, pad_width, mode="constant", constant_values=0)


def pad_to_next_multiple_of(x, m, axis=0):
  return pad_dim_to(x, pl.cdiv(x.shape[axis], m) * m, axis)
"""


def _described(source: str, name: str, line_has: str) -> list[str]:
    text = HEADER + source
    analysis = analyze(text)
    lines = text.splitlines()
    line = next(i for i, ln in enumerate(lines) if line_has in ln)
    out = [v.describe() for span, rec in analysis.records.items()
           if span.line == line and rec.name == name for v in rec.values]
    assert out, f"nothing recorded for {name} on line {line + 1}"
    return out


def _evaluate(size: str, **names: int) -> int:
    """A symbolic size as printed (`8*cdiv(T, 8)`), for concrete values of its names."""
    return eval(size, {"cdiv": lambda a, b: -(-a // b), **names})  # noqa: S307 (our own text)


def _jax_pad(x_shape, pad_width):
    return jax.eval_shape(lambda x: jnp.pad(x, pad_width), jax.ShapeDtypeStruct(x_shape, jnp.bfloat16)).shape


@pytest.mark.parametrize("pad_width", [1, (2,), (1, 2), ((1, 2),), ((0, 5), (3, 0)), [(0, 5), (0, 0)]])
def test_jnp_pad_grows_each_axis_as_jax_does(pad_width) -> None:
    source = f"""
def f():
  x = jnp.zeros((3, 4), jnp.bfloat16)
  y = jnp.pad(x, {pad_width!r})
"""
    expected = _jax_pad((3, 4), pad_width)
    assert _described(source, "y", "y =") == [f"bfloat16[{','.join(map(str, expected))}]"]


@pytest.mark.parametrize("pad_width", [((1, 2), (3, 4), (5, 6)), -1, ((1,), (2,))])
def test_jnp_pad_that_jax_refuses_is_not_given_a_shape(pad_width) -> None:
    with pytest.raises(ValueError):
        _jax_pad((3, 4), pad_width)
    source = f"""
def f():
  x = jnp.zeros((3, 4), jnp.bfloat16)
  y = jnp.pad(x, {pad_width!r})
"""
    assert _described(source, "y", "y =") == ["unknown"]


def test_cdiv_of_a_size_is_a_size_of_its_own_unless_it_divides() -> None:
    t = Sym.var("T")
    assert str(D.cdiv(t, 128)) == "cdiv(T, 128)"
    assert D.cdiv(D.mul(t, 4), 2) == D.mul(t, 2)
    assert D.cdiv(t, 1) == t
    assert D.cdiv(t, 0) is None and D.cdiv(7, 2) == 4 and D.cdiv(-7, 2) is None
    source = """
@jaxtyping.jaxtyped
def f(q: Float[Array, "T D"]):
  tiles = pl.cdiv(q.shape[0], 128)
  pairs = pl.cdiv(2 * q.shape[0], 2)
"""
    assert _described(source, "tiles", "tiles =") == ["int (cdiv(T, 128))"]
    assert _described(source, "pairs", "pairs =") == ["int (T)"]
    for t_value in (1, 127, 128, 129):
        assert _evaluate("cdiv(T, 128)", T=t_value) == pl.cdiv(t_value, 128)


def test_padding_to_a_multiple_keeps_the_symbolic_size_jax_computes() -> None:
    # On the path that returns `x` unpadded, `x.shape[0] == 8*cdiv(T, 8)`: both paths hand on
    # an array of `8*cdiv(T, 8)` rows, the size JAX gives for every T.
    source = PAD + """
@jaxtyping.jaxtyped
def f(q: Float[Array, "T H"]):
  qp = pad_to_next_multiple_of(q, 8)
  rows = qp.shape[0]
"""
    assert _described(source, "qp", "qp =") == ["q.dtype[8*cdiv(T, 8), H]"]
    namespace: dict = {}
    exec("import jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n" + PAD, namespace)  # noqa: S102
    for t_value in (1, 7, 8, 9, 16, 21):
        shape = jax.eval_shape(lambda q: namespace["pad_to_next_multiple_of"](q, 8),
                               jax.ShapeDtypeStruct((t_value, 3), jnp.float32)).shape
        assert shape[0] == _evaluate("8*cdiv(T, 8)", T=t_value)


def test_an_equality_holds_only_on_its_own_branch() -> None:
    source = """
@jaxtyping.jaxtyped
def f(a: Float[Array, "N M"]):
  n, m = a.shape
  if n == m:
    same = jnp.zeros((n,), a.dtype)
  else:
    same = jnp.zeros((m,), a.dtype)
  joined = same
  if n != m:
    other = jnp.zeros((n + 1,), a.dtype)
  else:
    other = jnp.zeros((m + 1,), a.dtype)
  joined_too = other
  kept = jnp.zeros((n, m), a.dtype)
"""
    # On the branch where N == M, N rows are M rows: both paths hand on M rows.
    assert _described(source, "joined", "joined =") == ["a.dtype[M]"]
    # The `else` of `!=` is where they are equal: M + 1 rows there are the other path's N + 1.
    assert _described(source, "joined_too", "joined_too =") == ["a.dtype[N + 1]"]
    # Recorded on its own branch, a value keeps its own spelling; after the `if`s nothing else
    # is rewritten.
    assert _described(source, "same", "same = jnp.zeros((m,)") == ["a.dtype[M]"]
    assert _described(source, "kept", "kept =") == ["a.dtype[N, M]"]


def test_a_helper_called_under_an_equality_is_not_told() -> None:
    # `grow` is memoised by its arguments: its result on the branch where N == M must not
    # stand in for the call where nothing is assumed.
    source = """
def grow(x):
  return jnp.concatenate([x, x])

@jaxtyping.jaxtyped
def f(a: Float[Array, "N"], b: Float[Array, "M"]):
  if a.shape[0] == b.shape[0]:
    inside = grow(a)
  outside = grow(a)
"""
    assert _described(source, "outside", "outside =") == ["a.dtype[2*N]"]


def test_a_size_is_another_where_their_difference_is_a_multiple_of_the_equation() -> None:
    t, c = Sym.var("T"), Sym.var("cdiv(T, 8)")
    eq = D.sub(D.mul(c, 8), t)  # 8*cdiv(T, 8) - T == 0 on the branch
    assert P.reconcile_dim(t, D.mul(c, 8), (eq,)) == D.mul(c, 8)
    assert P.reconcile_dim(D.mul(t, 2), D.mul(c, 16), (eq,)) == D.mul(c, 16)
    assert P.reconcile_dim(D.add(t, 1), D.mul(c, 8), (eq,)) == D.add(t, 1)  # off by one: kept
    assert P.reconcile_dim(t, Sym.var("S"), (eq,)) == t

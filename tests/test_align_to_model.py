"""`pl.align_to(a, alignment)` against the installed JAX: ints (every sign), sizes known only by
name, and arrays. tokamax's SM80 ragged dot pads its operands with it (`n_pad = pl.align_to(n,
block_n)`); unmodelled, every ref the kernel was given hovered with a `?` size."""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.values import ArrayVal, Const

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
import jaxtyping
from jaxtyping import Array, Float
"""


def _values(source: str, name: str) -> dict[int, list]:
    """The recorded values of `name` by line (0-based, in `source`)."""
    analysis = analyze(HEADER + source)
    offset = HEADER.count("\n")
    out: dict[int, list] = {}
    for span, rec in analysis.records.items():
        if rec.name == name:
            out.setdefault(span.line - offset, []).extend(rec.values)
    return out


def _jax(a: int, b: int) -> int | None:
    try:
        return pl.align_to(a, b)
    except ZeroDivisionError:
        return None


def test_of_two_ints_as_the_installed_jax_computes_it() -> None:
    rng = random.Random(20261206)
    pairs = [(rng.randint(-300, 300), rng.choice([-64, -8, -3, -1, 0, 1, 2, 3, 8, 64, 128, 100]))
             for _ in range(300)]
    source = "".join(f"x = pl.align_to({a}, {b})\n" for a, b in pairs)
    got = _values(source, "x")
    for line, (a, b) in enumerate(pairs):
        expected = _jax(a, b)
        values = got.get(line, [])
        if a >= 0 and b > 0:  # where every JAX rounds alike: the model knows it
            assert values == [Const(expected)], (a, b, values, expected)
        else:  # a negative operand (JAX's versions round differently) or JAX raises: no claim
            assert not any(isinstance(v, Const) for v in values), (a, b, values)


@pytest.mark.parametrize("t", [1, 127, 128, 129, 300])
def test_of_a_size_is_the_size_jax_computes(t: int) -> None:
    source = """
@jaxtyping.jaxtyped
def f(q: Float[Array, "T D"]):
  rows = pl.align_to(q.shape[0], 128)
  padded = jnp.zeros((rows, q.shape[1]), q.dtype)
"""
    (rows,) = _values(source, "rows")[3]  # (its assignment)
    size = rows.describe().removeprefix("int (").removesuffix(")")
    assert size == "128*cdiv(T, 128)"
    expected = jax.eval_shape(lambda q: jnp.zeros((pl.align_to(q.shape[0], 128), 4)),
                              jax.ShapeDtypeStruct((t, 4), jnp.float32)).shape[0]
    assert eval(size, {"cdiv": lambda a, b: -(-a // b), "T": t}) == expected  # noqa: S307 (our own text)


def test_with_an_array_an_integer_array_of_their_shape() -> None:
    source = """
def f():
  starts = pl.align_to(jnp.zeros((4, 8), jnp.int32), 16)
"""
    expected = jax.eval_shape(lambda: pl.align_to(jnp.zeros((4, 8), jnp.int32), 16))
    (v,) = [v for vs in _values(source, "starts").values() for v in vs]
    assert isinstance(v, ArrayVal) and v.shape == expected.shape and v.dtype.name == str(expected.dtype)

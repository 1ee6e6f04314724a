"""Hover on a keyword argument's name shows that argument's value, never the call's result
(`jnp.sum(y, keepdims=True)`: the cursor on `keepdims` is not on a `float32[1,8]`)."""

from __future__ import annotations

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import hover

SOURCE = '''import jax
import jax.numpy as jnp


def f(x, n=3):
  y = jnp.zeros((4, 8), dtype=x.dtype)
  z = jnp.sum(y, axis=0,
              keepdims=n == 3)
  w = dict(a=y)
  return z, w

# wgmma-lsp: trace f(bf16[4])
'''


def _first_line(line: int, word: str) -> str | None:
    analysis = analyze(SOURCE, "/tmp/hover_keywords.py")
    col = SOURCE.splitlines()[line].index(word) + 1
    h = hover(analysis, line, col)
    return h.markdown.splitlines()[0] if h is not None else None


def test_the_keyword_shows_its_argument_s_value() -> None:
    assert _first_line(5, "dtype=").startswith("**dtype**=`dtype bfloat16`")
    assert _first_line(8, "a=y").startswith("**a**=**y**: `bfloat16[4,8]`")


def test_a_value_with_nothing_recorded_shows_nothing_rather_than_the_call_s_result() -> None:
    assert _first_line(6, "axis") is None
    assert _first_line(7, "keepdims") is None  # (a continuation line of the call)


def test_a_parameter_default_and_an_assignment_are_not_keywords() -> None:
    assert _first_line(4, "n=3").startswith("**n**: `3`")
    assert _first_line(5, "y =").startswith("**y**: `bfloat16[4,8]`")


def test_a_value_over_several_lines() -> None:
    source = SOURCE.replace("w = dict(a=y)", "w = dict(a=jnp.zeros(\n      (2, 2)))")
    analysis = analyze(source, "/tmp/hover_keywords.py")
    line = source.splitlines().index("  w = dict(a=jnp.zeros(")
    h = hover(analysis, line, source.splitlines()[line].index("a=") + 1)
    assert h is not None and h.markdown.startswith("**a**=`float32[2,2]`")

"""Values the analysis keeps when a file is read as opened (no entry point gives the arguments):
ints known only as ints, `int`-annotated parameters, literal arrays, random example inputs."""

from __future__ import annotations

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.values import ArrayVal

HEADER = """\
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def _values(source: str, name: str, line_has: str) -> list[str]:
    """What the analysis recorded for `name` on the (first) line containing `line_has`."""
    text = HEADER + source
    analysis = analyze(text)
    lines = text.splitlines()
    line = next(i for i, ln in enumerate(lines) if line_has in ln)
    out = []
    for span, rec in analysis.records.items():
        if span.line == line and rec.name == name:
            out.extend(v.describe() for v in rec.values)
    assert out, f"nothing recorded for {name} on line {line + 1}"
    return out


def test_a_loop_index_joined_over_many_iterations_is_still_an_int() -> None:
    # 16 items: not unrolled; `i` is 0..15, an int: `start + i` is int32, as in JAX.
    source = """
def f():
  items = [jnp.zeros((), jnp.int32) for _ in range(16)]
  total = jnp.array(0, dtype=jnp.int32)
  for i, b in enumerate(items):
    shifted = total + i
    total = shifted + b
  return total
"""
    assert _values(source, "shifted", "shifted =") == ["int32[]"]


def test_int_arithmetic_beyond_sizes_stays_an_int() -> None:
    source = """
def f(rows):
  n = len(rows)
  width = 1 << int(n)
  y = jnp.zeros((16,), jnp.int32) + width * n
"""
    assert _values(source, "width", "width =") == ["int"]
    assert _values(source, "y", "y =") == ["int32[16]"]


def test_an_int_annotated_parameter_is_an_int_by_its_name() -> None:
    source = """
def f(group_starts, block_k: int):
  starts = jnp.zeros((16,), jnp.int32)
  block_starts = starts // block_k * block_k
  return block_starts
"""
    assert _values(source, "block_starts", "block_starts =") == ["int32[16]"]


def test_literal_arrays_have_numpys_shape_and_jaxs_dtype() -> None:
    source = """
a = jnp.array(0)
b = jnp.array([0])
c = jnp.array([0, 1.0])
d = jnp.array([[1, 2], [3, 4]], dtype=jnp.int8)
e = jnp.asarray(0.0)
g = jnp.array([[1], [2, 3]])
"""
    text = HEADER + source
    analysis = analyze(text)
    by_line: dict[int, ArrayVal] = {}
    for span, rec in analysis.records.items():
        if span.col == 0 and rec.values and isinstance(rec.values[0], ArrayVal):
            by_line[span.line] = rec.values[0]
    got = {text.splitlines()[ln][0]: (v.describe(), v.dtype.weak) for ln, v in by_line.items()}
    # As jax 0.10/0.12 give them: jnp.array(0) is weakly typed, a list is not.
    assert got == {"a": ("int32[]", True), "b": ("int32[1]", False), "c": ("float32[2]", False),
                   "d": ("int8[2,2]", False), "e": ("float32[]", True)}


def test_random_group_sizes_have_their_shape() -> None:
    source = """
def sample(key, num_groups: int, n: int):
  probs = jax.random.dirichlet(key, jnp.ones((16,)) * 10.0)
  counts = jax.random.multinomial(key, n, probs).astype(jnp.int32)
  return counts
"""
    assert _values(source, "probs", "probs =") == ["float32[16]"]
    assert _values(source, "counts", "counts =") == ["int32[16]"]

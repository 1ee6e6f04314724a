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


def test_non_linear_sizes_are_sizes_named_by_their_expression() -> None:
    from wgmma_lsp.interpret import dims as D

    a, b, n = D.Sym.var("a"), D.Sym.var("b"), D.Sym.var("jax.device_count()")
    assert str(D.mul(a, b)) == "a*b" and D.equal(D.mul(a, b), D.mul(b, a)) is True
    assert str(D.floordiv(16384, n)) == "16384 // jax.device_count()"
    assert str(D.floordiv(D.add(a, 1), 2)) == "(a + 1) // 2"
    assert D.floordiv(D.mul(a, 4), 2) == D.mul(a, 2)  # still exact where linear
    assert D.floordiv(a, 1) == a and D.floordiv(a, 0) is None
    # the same expression is the same size; a different one is undecided, never "different"
    assert D.equal(D.floordiv(16384, n), D.floordiv(16384, n)) is True
    assert D.equal(D.floordiv(16384, n), 16384) is None
    assert D.equal(D.mul(a, b), D.mul(a, a)) is None
    assert D.equal(D.add(D.mul(a, b), 1), D.mul(a, b)) is False


def test_gcd_with_one_is_one_whatever_the_other_int() -> None:
    source = """
def f(n: int, tile: int):
  g = math.gcd(1, n)
  h = math.gcd(tile, n)
  x = jnp.zeros((g, 8), jnp.float32)
"""
    assert _values("import math\n" + source, "x", "x =") == ["float32[1,8]"]
    assert _values("import math\n" + source, "h", "h =") == ["int"]


def test_a_shard_of_a_size_split_over_an_unknown_device_count_is_named() -> None:
    source = """
from jax.sharding import PartitionSpec as P

def body(x):
  y = x
  return y

def run():
  mesh = jax.make_mesh((jax.device_count(),), ("x",))
  a = jnp.zeros((16384, 512), jnp.bfloat16)
  return jax.shard_map(body, mesh=mesh, in_specs=P("x", None), out_specs=P("x", None))(a)
"""
    # (body is also analysed on its own, with x unknown)
    assert "bfloat16[16384 // jax.device_count(), 512]" in _values(source, "y", "y = x")


FLAGGED = """
def f(x, *, flip: bool = False):
  m, k = x.shape
  if flip:
    y = jnp.zeros((k, m), x.dtype)
    def body(acc_ref):
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    pl.run_scoped(body, plgpu.ACC((64, 128)))
  else:
    y = jnp.zeros((m, k), x.dtype)
  return y

def main():
  f(jnp.zeros((64, 32), jnp.float32))

if __name__ == "__main__":
  main()
"""


def test_lines_behind_a_flags_default_get_hovers_but_no_diagnostics() -> None:
    from wgmma_lsp.ide.diagnostics import diagnostics

    # main() runs f with flip=False; the flip=True lines still get symbolic hovers ...
    assert _values(FLAGGED, "y", "y = jnp.zeros((k, m)") == ["x.dtype[k, m]"]
    assert _values(FLAGGED, "y", "y = jnp.zeros((m, k)") == ["float32[64,32]"]
    # ... and what only that branch would do is not reported: no run of the program reaches it
    assert [d.code for d in diagnostics(analyze(HEADER + FLAGGED))] == []


def test_throwaway_names_in_a_shape_unpacking_are_not_one_size() -> None:
    source = """
def f(k):
  _, kv_seq_len, heads, _ = k.shape
  b = k
  return b
"""
    assert _values(source, "b", "b = k") == ["k.dtype[k.shape[0], kv_seq_len, heads, k.shape[3]]"]


def test_a_name_in_the_untaken_branch_of_a_conditional_expression_shows_what_it_holds() -> None:
    # `acc if activation is None else activation(acc)`: the `else` is never evaluated (nothing is
    # called), but its `acc` is the same array, and hovers as such.
    source = """
def f():
  acc = jnp.zeros((64, 128), jnp.float32)
  activation = None
  out = acc if activation is None else activation(acc)
"""
    assert _values(source, "acc", "out =") == ["float32[64,128]", "float32[64,128]"]
    assert _values(source, "activation", "out =") == ["None", "None"]

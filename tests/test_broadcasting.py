"""WG088/WG089 (models/broadcasting.py) against JAX itself: for random shape pairs, `+ - * /` and
the comparisons, the analyzer reports exactly when `jax.eval_shape` of the operator raises, with JAX's
message; outside a kernel body nothing is claimed (an array there may be a NumPy array)."""

from __future__ import annotations

import operator
import random

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from wgmma_lsp.analysis import analyze  # noqa: E402
from wgmma_lsp.ide.diagnostics import diagnostics  # noqa: E402

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
       "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
       "!=": operator.ne}
KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(a_ref, b_ref, o_ref):
  o_ref[...] = jnp.zeros(o_ref.shape, o_ref.dtype) + jnp.sum((a_ref[...] {op} b_ref[...]).astype(jnp.float32))


def f(a, b):
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32))(a, b)

# wgmma-lsp: trace f({dtype}[{a}], {dtype}[{b}])
'''


def _shapes(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    def one() -> tuple[int, ...]:
        return tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(1, 3)))
    a = one()
    b = a if rng.random() < 0.3 else one()
    return a, b


CASES = [(*_shapes(random.Random(seed)), random.Random(seed).choice(sorted(OPS)),
          random.Random(seed + 1).choice(["float32", "int32", "bool"])) for seed in range(64)]


@pytest.mark.parametrize("a, b, op, dtype", CASES)
def test_reported_exactly_when_jax_raises(a: tuple, b: tuple, op: str, dtype: str) -> None:
    try:
        jax.eval_shape(OPS[op], jax.ShapeDtypeStruct(a, dtype), jax.ShapeDtypeStruct(b, dtype))
        expected = set()
    except (TypeError, ValueError) as e:  # (`-` of booleans: a dtype error, not these rules')
        expected = {str(e)} if "broadcasting" in str(e) else set()
    short = {"float32": "f32", "int32": "i32", "bool": "bool"}[dtype]
    source = KERNEL.format(op=op, dtype=short, a=",".join(map(str, a)), b=",".join(map(str, b)))
    got = {d.message for d in diagnostics(analyze(source, "/tmp/broadcasting.py"))
           if d.code in ("WG088", "WG089")}
    assert got == expected


def test_nothing_is_claimed_outside_a_kernel_body() -> None:
    source = "import jax.numpy as jnp\n\nx = jnp.ones((2, 3)) + jnp.ones((3, 2))\n"
    assert not [d for d in diagnostics(analyze(source, "/tmp/broadcasting.py")) if d.code in ("WG088", "WG089")]


AFTER_AN_ERROR = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref, y_ref, o_ref):
  o_ref[...] = x_ref[...].astype(jnp.bfloat16)
  o_ref[...] = x_ref[...] + y_ref[...].T


def f(x, y):
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 32), jnp.float32))(x, y)

# wgmma-lsp: trace f(f32[64,32], f32[64,32])
'''


def test_nothing_is_claimed_after_jax_raised(tmp_path) -> None:
    """JAX stops at its first error: a broadcasting error after a store JAX rejects while tracing
    is never reached (tokamax's GLU with its accumulator's sizes swapped fails in its wgmma before
    its epilogue multiplies the halves of the tile)."""
    path = tmp_path / "after_an_error.py"
    path.write_text(AFTER_AN_ERROR)
    scope: dict = {}
    exec(compile(AFTER_AN_ERROR, str(path), "exec"), scope)  # noqa: S102
    spec = jax.ShapeDtypeStruct((64, 32), jnp.float32)
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        jax.jit(scope["f"]).trace(spec, spec)
    codes = [d.code for d in diagnostics(analyze(AFTER_AN_ERROR, str(path))) if d.severity.name == "ERROR"]
    assert codes == ["WG057"]

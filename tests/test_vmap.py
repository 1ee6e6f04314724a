"""`jax.vmap` as JAX traces it: the function sees one example, the result gets the batch axis.

Each case runs through the analyzer and through `jax.eval_shape` of the same function: the
shapes the analyzer claims (inside the function and for the result) must be JAX's; a case JAX
refuses gets no shape."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from wgmma_lsp.analysis import analyze

HEADER = "import functools\nimport jax\nimport jax.numpy as jnp\n"

CASES = {
    "default": ("lambda x, y: (x + y, x.sum())", "(x, y)", "0", "0"),
    "per_argument": ("lambda x, n, t: x * n", "(x, 2, (1, 2))", "(0, None, None)", "0"),
    "axis_one": ("lambda x: x[0]", "(x,)", "1", "0"),
    "negative_axis": ("lambda x: x", "(x,)", "-1", "0"),
    "out_axis": ("lambda x, y: x @ y", "(x, y2)", "(0, 0)", "1"),
    "tuple_argument": ("lambda p: p[0] - p[1]", "((x, x),)", "0", "0"),
}

ARRAYS = "  x = jnp.zeros((3, 4), jnp.float32)\n  y = jnp.ones((3, 4), jnp.float32)\n  y2 = jnp.ones((3, 4, 5), jnp.float32)\n"


def _analyzed_shape(fun: str, args: str, in_axes: str, out_axes: str) -> str:
    source = (HEADER + "def main():\n" + ARRAYS +
              f"  out = jax.vmap({fun}, in_axes={in_axes}, out_axes={out_axes})(*{args})\n"
              "  return out\n\nif __name__ == '__main__':\n  main()\n")
    analysis = analyze(source, "vmap_case.py")
    shown = sorted({v.describe() for s, r in analysis.records.items() if r.kind == "store" and r.name == "out"
                    for v in r.values})
    return " | ".join(shown)


def _describe(tree) -> str:
    def leaf(a):
        return f"{a.dtype}[{','.join(map(str, a.shape))}]"
    leaves = jax.tree.map(leaf, tree)
    if isinstance(leaves, tuple):
        return "(" + ", ".join(leaves) + ("," if len(leaves) == 1 else "") + ")"
    return leaves


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_gives_jaxs_shapes(name: str) -> None:
    fun, args, in_axes, out_axes = CASES[name]
    x = jnp.zeros((3, 4), jnp.float32)
    y = jnp.ones((3, 4), jnp.float32)
    y2 = jnp.ones((3, 4, 5), jnp.float32)
    env = {"jax": jax, "jnp": jnp, "x": x, "y": y, "y2": y2}
    expected = eval(f"jax.eval_shape(lambda *a: jax.vmap({fun}, in_axes={in_axes}, out_axes={out_axes})(*a), *{args})",
                    env)  # noqa: S307 (the test's own cases)
    got = _analyzed_shape(fun, args, in_axes, out_axes)
    assert got == _describe(expected).replace("float32[]", "float32[]"), (got, expected)


@pytest.mark.parametrize("in_axes, args", [("(0, 0)", "(x, y2)"), ("2", "(x,)"), ("(0,)", "(x, y)"), ("None", "(x,)")])
def test_vmap_that_jax_refuses_gives_no_shape(in_axes: str, args: str) -> None:
    x = jnp.zeros((3, 4), jnp.float32)
    y = jnp.ones((3, 4), jnp.float32)
    y2 = jnp.ones((2, 4, 5), jnp.float32)
    with pytest.raises((ValueError, TypeError)):
        jax.eval_shape(lambda *a: jax.vmap(lambda *b: b[0], in_axes=eval(in_axes))(*a),  # noqa: S307
                       *eval(args, {"x": x, "y": y, "y2": y2}))  # noqa: S307
    source = (HEADER + "def main():\n  x = jnp.zeros((3, 4), jnp.float32)\n  y = jnp.ones((3, 4), jnp.float32)\n"
              "  y2 = jnp.ones((2, 4, 5), jnp.float32)\n"
              f"  out = jax.vmap(lambda *b: b[0], in_axes={in_axes})(*{args})\n\nif __name__ == '__main__':\n  main()\n")
    analysis = analyze(source, "vmap_bad.py")
    shown = {v.describe() for s, r in analysis.records.items() if r.kind == "store" and r.name == "out" for v in r.values}
    assert shown == {"unknown"}


def test_the_function_sees_one_example() -> None:
    source = (HEADER + "def main():\n  x = jnp.zeros((8, 64, 128), jnp.bfloat16)\n"
              "  def one(row, scale):\n    seen = row\n    kept = scale\n    return row * scale\n"
              "  out = jax.vmap(one, in_axes=(0, None))(x, 2)\n\nif __name__ == '__main__':\n  main()\n")
    analysis = analyze(source, "vmap_inner.py")
    stored = {r.name: sorted({v.describe() for v in r.values}) for s, r in analysis.records.items() if r.kind == "store"}
    assert stored["seen"] == ["bfloat16[64,128]"]
    assert stored["kept"] == ["2"]  # an unmapped Python int stays an int, as under JAX
    assert stored["out"] == ["bfloat16[8,64,128]"]

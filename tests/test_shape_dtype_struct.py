"""`jax.ShapeDtypeStruct.like(x)`, as JAX's own tests build a kernel's `out_type`: the shape and
dtype of an array or of another ShapeDtypeStruct, checked against real JAX. Before the model,
such a kernel was checked "without concrete shapes" and a store of the wrong shape into it went
unreported (tests/fixtures/errors/store_shape_pipeline_tiled_block.py)."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from wgmma_lsp.analysis import analyze  # noqa: E402
from wgmma_lsp.interpret.values import ShapeDtypeVal  # noqa: E402

CASES = [
    ("jax.ShapeDtypeStruct((64, 256), jnp.float32)", (64, 256), "float32"),
    ("jnp.zeros((8, 128), jnp.bfloat16)", (8, 128), "bfloat16"),
    ("jnp.ones((3,), jnp.int8)", (3,), "int8"),
]


@pytest.mark.parametrize("expr, shape, dtype", CASES)
def test_like_gives_the_shape_and_dtype_jax_gives(expr: str, shape: tuple, dtype: str) -> None:
    real = jax.ShapeDtypeStruct.like(eval(expr, {"jax": jax, "jnp": jnp}))  # noqa: S307
    assert (real.shape, str(real.dtype)) == (shape, dtype)
    source = f"import jax\nimport jax.numpy as jnp\nout = jax.ShapeDtypeStruct.like({expr})\n"
    analysis = analyze(source, "/tmp/sds_like.py")
    values = [v for r in analysis.records.values() if r.name == "out" for v in r.values]
    assert len(values) == 1 and isinstance(values[0], ShapeDtypeVal)
    assert values[0].array.shape == shape and values[0].array.dtype.name == dtype


def test_like_of_something_unknown_is_unknown() -> None:
    source = "import jax\n\ndef f(x):\n    out = jax.ShapeDtypeStruct.like(x)\n    return out\n"
    analysis = analyze(source, "/tmp/sds_like.py")
    assert not any(isinstance(v, ShapeDtypeVal) for r in analysis.records.values() for v in r.values)

"""flax's `dot_product_attention` as kernel libraries' tests use it as their reference
(models/flax_attention.py): the aval of its result, checked against real flax and JAX; an
argument flax would reject gives no value."""

from __future__ import annotations

import pytest
from test_python_calls import aval, interpreted, jax_aval

pytest.importorskip("flax")

PROGRAM = """
import functools
import jax
import jax.numpy as jnp
from flax import linen as nn

q = jnp.zeros((2, 128, 4, 64), jnp.bfloat16)
k = jnp.zeros((2, 256, 4, 64), jnp.bfloat16)
v = jnp.zeros((2, 256, 4, 32), jnp.float32)
out = nn.dot_product_attention(q, k, v, precision=jax.lax.Precision.HIGHEST)
half = nn.dot_product_attention(q, k, v.astype(jnp.bfloat16))
forced = nn.attention.dot_product_attention(q, k, v, dtype=jnp.float16)
ref = functools.partial(nn.dot_product_attention, precision=jax.lax.Precision.HIGHEST)
expected, pullback = jax.vjp(lambda q, k, v: ref(q, k, v), q.astype(jnp.float32), k.astype(jnp.float32), v)
"""


@pytest.mark.parametrize("name", ["out", "half", "forced", "expected"])
def test_the_result_aval_is_flaxs(name: str) -> None:
    assert aval(PROGRAM, name) == jax_aval(PROGRAM, name)


def test_arguments_flax_rejects_give_no_value() -> None:
    source = PROGRAM + """
heads = nn.dot_product_attention(q, k[:, :, :2], v)
unknown_kw = nn.dot_product_attention(q, k, v, logits_soft_cap=1.0)
"""
    got = interpreted(source)
    assert got["out"].describe() == "float32[2,128,4,32]"
    assert got["heads"].describe() == "unknown"  # (flax asserts q, k, v num_heads match)
    assert got["unknown_kw"].describe() == "unknown"  # (a TypeError)

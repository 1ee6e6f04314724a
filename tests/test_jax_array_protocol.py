"""`jnp.asarray(x)` / `jnp.array(x)` of an object whose class defines `__jax_array__`: JAX converts
it with that method (tokamax's `GroupSizes` holds the group sizes array so). Checked against
the installed JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.values import ArrayVal

SOURCE = """\
import jax.numpy as jnp


class Sizes:
  def __init__(self, value):
    self.value = value

  def __jax_array__(self):
    return jnp.asarray(self.value)


class Plain:
  pass


sizes = Sizes(jnp.zeros((8,), jnp.uint32))
a = jnp.array(sizes)
b = jnp.asarray(sizes, jnp.int32)
c = jnp.asarray(Plain())
"""


class Sizes:
    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return jnp.asarray(self.value)


def _value(name: str):
    analysis = analyze(SOURCE, "sizes.py")
    (values,) = [rec.values for span, rec in analysis.records.items() if rec.name == name and span.col == 0]
    return values


def test_the_method_converts_the_object_as_in_jax() -> None:
    for name, fn in (("a", lambda s: jnp.array(s)), ("b", lambda s: jnp.asarray(s, jnp.int32))):
        expected = jax.eval_shape(lambda: fn(Sizes(jnp.zeros((8,), jnp.uint32))))
        (v,) = _value(name)
        assert isinstance(v, ArrayVal) and v.shape == expected.shape and v.dtype.name == str(expected.dtype), v


def test_an_object_without_it_is_not_known() -> None:
    assert not any(isinstance(v, ArrayVal) for v in _value("c"))

"""Pytrees as JAX builds them from a library's own classes, and `jax.vmap` over them.

Kernel libraries pass their residuals, configs and masks through `jax.tree` as objects of their
own classes: `@jax.tree_util.register_dataclass` (fields marked `static` in their metadata are
part of the tree's structure), `@register_pytree_node_class` (the class's own `tree_flatten` /
`tree_unflatten` run) and `register_static` (no leaves at all). tokamax's `vmap_maybe_bcast`
broadcasts `in_axes` over such trees and maps with an axis tree that mirrors the arguments.

CPython with JAX is the spec: every program runs in CPython and through the interpreter (as
module code), and what the interpreter claims for the names checked must be what CPython holds
(Python values equal, arrays with JAX's dtype and shape).
"""

from __future__ import annotations

from pytree_agree import agree, claims
from test_python_calls import HEADER

DATACLASS = HEADER + """
import dataclasses

@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Mask:
    k_start: object
    k_end: object
    block: int = dataclasses.field(metadata=dict(static=True), default=64)
"""


def test_register_dataclass_leaves_are_its_data_fields_in_field_order() -> None:
    agree(DATACLASS + """
m = Mask(jnp.zeros((4, 8), jnp.int32), jnp.ones((4,), jnp.float32), block=128)
leaves = jax.tree.leaves(m)
n = len(leaves)
none_field = jax.tree.leaves(Mask(None, jnp.zeros((2,), jnp.bfloat16)))
""", "leaves", "n", "none_field")


def test_register_dataclass_rebuilds_with_its_static_fields() -> None:
    agree(DATACLASS + """
m = Mask(jnp.zeros((4, 8), jnp.int32), jnp.ones((4,), jnp.float32), block=128)
leaves, tree = jax.tree.flatten(m)
back = jax.tree.unflatten(tree, [x.astype(jnp.float16) for x in leaves])
block = back.block
start = back.k_start
doubled = jax.tree.map(lambda x: x * 2, m)
end = doubled.k_end
same_block = doubled.block
""", "block", "start", "end", "same_block")


def test_register_dataclass_with_explicit_field_lists() -> None:
    agree(HEADER + """
class Pair:
    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag

jax.tree_util.register_dataclass(Pair, data_fields=["b", "a"], meta_fields=["tag"])
p = Pair(jnp.zeros((2,), jnp.float32), jnp.zeros((3, 3), jnp.int8), "x")
leaves = jax.tree.leaves(p)
q = jax.tree.map(lambda x: x[None], p)
qa, qtag = q.a, q.tag
""", "leaves", "qa", "qtag")


def test_pytree_node_class_runs_its_own_flatten_and_unflatten() -> None:
    agree(HEADER + """
import dataclasses

@jax.tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True)
class Res:
    m: object
    l: object
    scale: float

    def tree_flatten(self):
        return (self.l, self.m), self.scale

    @classmethod
    def tree_unflatten(cls, aux, children):
        l, m = children
        return cls(m, l, aux * 2)

r = Res(jnp.zeros((2, 16), jnp.float32), jnp.ones((2, 16), jnp.bfloat16), 0.5)
leaves, tree = jax.tree.flatten(r)
back = tree.unflatten(leaves)
back_scale, back_m = back.scale, back.m
count = tree.num_leaves
in_tuple = jax.tree.leaves((r, jnp.zeros((1,), jnp.int32)))
""", "leaves", "back_scale", "back_m", "count", "in_tuple")


def test_a_static_class_has_no_leaves() -> None:
    agree(HEADER + """
class Opts:
    def __init__(self, n):
        self.n = n
    def __eq__(self, other):
        return isinstance(other, Opts) and other.n == self.n
    def __hash__(self):
        return hash(self.n)

jax.tree_util.register_static(Opts)
leaves = jax.tree.leaves((Opts(3), jnp.zeros((5,), jnp.float32)))
mapped = jax.tree.map(lambda x: x + 1, (Opts(3), jnp.zeros((5,), jnp.float32)))
n = mapped[0].n
""", "leaves", "n")


def test_named_tuples_keep_their_type_through_tree_map() -> None:
    agree(HEADER + """
from typing import NamedTuple

class MinMax(NamedTuple):
    lo: object
    hi: object

t = jax.tree.map(lambda x: x.astype(jnp.bfloat16), MinMax(jnp.zeros((3,)), jnp.ones((4, 2))))
lo, hi = t.lo, t.hi
is_named = isinstance(t, MinMax)
""", "lo", "hi", "is_named")


def test_unflatten_takes_any_iterable_of_leaves() -> None:
    agree(HEADER + """
leaves, tree = jax.tree.flatten({"b": jnp.zeros((2,)), "a": (jnp.zeros((3,), jnp.int32), None)})
back = tree.unflatten(x * 2 for x in leaves)
""", "back")


# -- vmap over trees of axes --------------------------------------------------------------------
VMAP_MAYBE_BCAST = HEADER + """
def _broadcast_prefix(prefix_tree, full_tree):
  result = []
  num_leaves = lambda t: jax.tree.structure(t).num_leaves
  add_leaves = lambda x, subtree: result.extend([x] * num_leaves(subtree))
  jax.tree.map(add_leaves, prefix_tree, full_tree, is_leaf=lambda x: x is None)
  return result

def vmap_maybe_bcast(f, in_axes):
  @functools.wraps(f)
  def vmapped(*args):
    in_axes_flat = _broadcast_prefix(in_axes, args)
    args_flat, args_tree = jax.tree.flatten(args)

    def arg_axis(x, axis):
      if axis is None:
        return x, None
      return (jnp.squeeze(x, axis), None) if x.shape[axis] == 1 else (x, axis)

    args_flat, in_axes_flat = zip(*map(arg_axis, args_flat, in_axes_flat))
    args = args_tree.unflatten(args_flat)
    if all(axis is None for axis in in_axes_flat):
      return jax.tree.map(lambda x: jnp.expand_dims(x, 0), f(*args))
    return jax.vmap(f, args_tree.unflatten(in_axes_flat))(*args)
  return vmapped

def kernel(q, residuals, bias, *, scale):
  m, l = residuals
  return q * scale, m + l
"""


def test_vmap_maps_with_an_axis_tree_mirroring_the_arguments() -> None:
    # tokamax's `vmap_maybe_bcast`: the axes broadcast over the arguments' leaves, then
    # rebuilt into a tree with the arguments' structure (residuals a pair, bias None).
    agree(VMAP_MAYBE_BCAST + """
q = jnp.zeros((2, 8, 4), jnp.bfloat16)
m = jnp.zeros((2, 4), jnp.float32)
out = vmap_maybe_bcast(functools.partial(kernel, scale=2.0), 0)(q, (m, m), None)
unmapped = vmap_maybe_bcast(functools.partial(kernel, scale=2.0), 0)(q[:1], (m[:1], m[:1]), None)
""", "out", "unmapped")


def test_vmap_axis_trees_of_tuples_dicts_and_none() -> None:
    agree(HEADER + """
def f(x, pair, d):
    a, b = pair
    return x + a.sum(), b * d["w"]

x = jnp.zeros((3, 5), jnp.float32)
pair = (jnp.zeros((7, 3)), jnp.zeros((4,), jnp.bfloat16))
d = {"w": jnp.zeros((3, 4), jnp.bfloat16)}
out = jax.vmap(f, in_axes=(0, (1, None), {"w": 0}))(x, pair, d)
""", "out")


def test_vmap_with_an_axis_tree_that_is_no_prefix_claims_nothing() -> None:
    # JAX raises ("in_axes specification must be a tree prefix"); nothing is claimed.
    assert claims(HEADER + """
def f(x, pair):
    return x
out = jax.vmap(f, in_axes=(0, (0, 0, 0)))(jnp.zeros((3,)), (jnp.zeros((3,)), jnp.zeros((3,))))
""", "out") is None

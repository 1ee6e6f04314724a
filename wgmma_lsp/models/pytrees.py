"""JAX's pytrees over values the analysis knows: `jax.tree.flatten/unflatten/leaves/structure/map`
and their `jax.tree_util` spellings (jax/_src/tree_util.py).

A pytree here is made of tuples, lists, dicts (flattened in sorted key order, as JAX does) and
`None` (a node without children); its leaves are the values that are certainly leaves for
JAX: arrays, refs, `ShapeDtypeStruct`s, dtypes, functions and Python scalars and strings.
`is_leaf` is called on every node before it is flattened, as JAX does; it must answer a known
bool. Anything else in the tree — an unknown value, an instance of a class that may be a
registered pytree node (a dataclass, a NamedTuple) — makes the structure unknown: the call is
then an unknown call (functions handed to it are still analysed, their effects uncertain).

A treedef is `Wrapped("pytree.treedef", <the tree with every leaf replaced by LEAF>)`:
`treedef.unflatten(leaves)` / `jax.tree.unflatten(treedef, leaves)` rebuild the tree with the
given leaves (as many as the treedef has; otherwise JAX raises, and no value follows).
"""

from __future__ import annotations

from typing import Iterator

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    AllocSpec,
    ApiVal,
    ArrayVal,
    BoundMethod,
    Const,
    DictVal,
    DTypeVal,
    FuncVal,
    PartialVal,
    RefVal,
    ShapeDtypeVal,
    TupleVal,
    Value,
    Wrapped,
)
from wgmma_lsp.models.registry import ATTRIBUTES, method, model

TREEDEF = "pytree.treedef"
LEAF = Const(Ellipsis)  # a leaf's place in a treedef's structure (`...` itself is a leaf: replaced too)
MAX_LEAVES = 256

_CERTAIN_LEAVES = (ArrayVal, RefVal, ShapeDtypeVal, DTypeVal, FuncVal, PartialVal, BoundMethod,
                   AllocSpec, ApiVal)


class _Unknown(Exception):
    """The tree's structure is not known."""


def _is_leaf(call: Call, is_leaf: Value, node: Value) -> bool:
    if isinstance(is_leaf, Const) and is_leaf.value is None:
        return False
    answer = call.interp.call_value(is_leaf, Call(call.interp, call.node, [node], {}, [None], {}, call.env))
    if isinstance(answer, Const) and isinstance(answer.value, bool):
        return answer.value
    raise _Unknown


def _flatten(call: Call, tree: Value, is_leaf: Value, leaves: list[Value]) -> Value:
    """`tree`'s structure (leaves replaced by LEAF), its leaves appended to `leaves`."""
    if len(leaves) > MAX_LEAVES:
        raise _Unknown
    if _is_leaf(call, is_leaf, tree):
        leaves.append(tree)
        return LEAF
    tree = mutation.live(call.interp, tree)  # a list changed in a way not followed: unknown
    if isinstance(tree, TupleVal):
        return TupleVal(tuple(_flatten(call, x, is_leaf, leaves) for x in tree.items), tree.is_list)
    if isinstance(tree, DictVal):
        try:
            items = sorted(tree.items, key=lambda kv: kv[0])
        except TypeError:
            raise _Unknown from None  # keys JAX could not sort either: it raises
        return DictVal(tuple((k, _flatten(call, v, is_leaf, leaves)) for k, v in items))
    if isinstance(tree, Const):
        if tree.value is None:
            return tree  # a node without children
        if isinstance(tree.value, (bool, int, float, complex, str, bytes, type(Ellipsis))):
            leaves.append(tree)
            return LEAF
        raise _Unknown
    if isinstance(tree, _CERTAIN_LEAVES):
        leaves.append(tree)
        return LEAF
    raise _Unknown


def _rebuild(structure: Value, leaves: Iterator[Value]) -> Value:
    if structure == LEAF:
        return next(leaves)
    if isinstance(structure, TupleVal):
        return TupleVal(tuple(_rebuild(x, leaves) for x in structure.items), structure.is_list)
    if isinstance(structure, DictVal):
        return DictVal(tuple((k, _rebuild(v, leaves)) for k, v in structure.items))
    return structure  # None


def _count(structure: Value) -> int:
    if structure == LEAF:
        return 1
    if isinstance(structure, TupleVal):
        return sum(_count(x) for x in structure.items)
    if isinstance(structure, DictVal):
        return sum(_count(v) for _, v in structure.items)
    return 0


def _flat(call: Call, tree: Value) -> tuple[list[Value], Value] | None:
    leaves: list[Value] = []
    try:
        structure = _flatten(call, tree, call.get(99, "is_leaf", Const(None)), leaves)
    except _Unknown:
        return None
    return leaves, structure


def _treedef(structure: Value) -> Wrapped:
    return Wrapped(TREEDEF, structure, {})


@model("jax.tree.flatten", "jax.tree_util.tree_flatten")
def _tree_flatten(call: Call) -> Value:
    """`jax.tree.flatten(tree, is_leaf=None)`: `(leaves, treedef)`."""
    flat = _flat(call, call.get(0, "tree")) if call.complete else None
    if flat is None:
        return call.interp.unknown_call(call)
    leaves, structure = flat
    return TupleVal((TupleVal(tuple(leaves), is_list=True), _treedef(structure)))


@model("jax.tree.leaves", "jax.tree_util.tree_leaves")
def _tree_leaves(call: Call) -> Value:
    """`jax.tree.leaves(tree, is_leaf=None)`: the leaves, as a list."""
    flat = _flat(call, call.get(0, "tree")) if call.complete else None
    if flat is None:
        return call.interp.unknown_call(call)
    return TupleVal(tuple(flat[0]), is_list=True)


@model("jax.tree.structure", "jax.tree_util.tree_structure")
def _tree_structure(call: Call) -> Value:
    """`jax.tree.structure(tree, is_leaf=None)`: the treedef."""
    flat = _flat(call, call.get(0, "tree")) if call.complete else None
    if flat is None:
        return call.interp.unknown_call(call)
    return _treedef(flat[1])


def _unflatten(call: Call, treedef: Value, leaves: Value) -> Value:
    leaves = mutation.live(call.interp, leaves)
    if not (isinstance(treedef, Wrapped) and treedef.api == TREEDEF) or not isinstance(leaves, TupleVal):
        return UNKNOWN
    if len(leaves.items) != _count(treedef.func):
        return UNKNOWN  # JAX raises: "Too few/many leaves for PyTreeDef"
    return _rebuild(treedef.func, iter(leaves.items))


@model("jax.tree.unflatten", "jax.tree_util.tree_unflatten")
def _tree_unflatten(call: Call) -> Value:
    """`jax.tree.unflatten(treedef, leaves)`: the tree rebuilt with these leaves."""
    return _unflatten(call, call.get(0, "treedef"), call.get(1, "leaves"))


@method(f"wrapped:{TREEDEF}.unflatten")
def _treedef_unflatten(treedef: Value, call: Call) -> Value:
    """`treedef.unflatten(leaves)`."""
    return _unflatten(call, treedef, call.get(0, "leaves"))


ATTRIBUTES[f"wrapped:{TREEDEF}.num_leaves"] = lambda t: Const(_count(t.func))


@model("jax.tree.map", "jax.tree_util.tree_map")
def _tree_map(call: Call) -> Value:
    """`jax.tree.map(f, tree, *rest, is_leaf=None)`: f applied to each leaf of tree and the
    corresponding subtrees of `rest` (each has tree's structure as a prefix), the tree rebuilt
    from the results."""
    if not call.complete or len(call.args) < 2:
        return call.interp.unknown_call(call)
    f = call.args[0]
    first = _flat(call, call.args[1])
    if first is None:
        return call.interp.unknown_call(call)
    leaves, structure = first
    columns = [leaves]
    for rest in call.args[2:]:  # flattened up to the first tree's structure (`flatten_up_to`)
        try:
            columns.append(_up_to(call, structure, rest))
        except _Unknown:
            return call.interp.unknown_call(call)  # (a structure that is no prefix: JAX raises)
    interp = call.interp
    results = [interp.call_value(f, Call(interp, call.node, [col[i] for col in columns], {},
                                         [None] * len(columns), {}, call.env))
               for i in range(len(leaves))]
    return _rebuild(structure, iter(results))


def _up_to(call: Call, structure: Value, tree: Value) -> list[Value]:
    """The subtrees of `tree` at `structure`'s leaves (`treedef.flatten_up_to(tree)`): a leaf
    of the structure takes the whole subtree there (`jax.tree.map(f, 0, (x, y))` calls
    `f(0, (x, y))`); elsewhere the nodes must be the same."""
    if structure == LEAF:
        return [tree]
    tree = mutation.live(call.interp, tree)
    if isinstance(structure, TupleVal):
        if not isinstance(tree, TupleVal) or tree.is_list != structure.is_list \
                or len(tree.items) != len(structure.items) or type(tree) is not type(structure):
            raise _Unknown
        return [x for s, t in zip(structure.items, tree.items) for x in _up_to(call, s, t)]
    if isinstance(structure, DictVal):
        if not isinstance(tree, DictVal) or sorted(k for k, _ in tree.items) != [k for k, _ in structure.items]:
            raise _Unknown
        values = dict(tree.items)
        return [x for k, s in structure.items for x in _up_to(call, s, values[k])]
    if isinstance(tree, Const) and tree.value is None:
        return []
    raise _Unknown

"""JAX's pytrees over values the analysis knows: `jax.tree.flatten/unflatten/leaves/structure/map`
and their `jax.tree_util` spellings (jax/_src/tree_util.py).

A pytree here is made of tuples, lists, dicts (flattened in sorted key order, as JAX does) and
`None` (a node without children); its leaves are the values that are certainly leaves for
JAX: arrays, refs, `ShapeDtypeStruct`s, dtypes, functions and Python scalars and strings.
NamedTuples are nodes of their fields; an object of a class the code registered
(`@register_pytree_node_class`: its `tree_flatten()`/`tree_unflatten()` run as CPython runs
them; `@register_dataclass`: its data fields are children, its meta fields aux data;
`@register_static`: no children) is a node as JAX's registry makes it.
`is_leaf` is called on every node before it is flattened, as JAX does; it must answer a known
bool. Anything else in the tree — an unknown value, an object of a class not known to be
registered or not — makes the structure unknown: the call is then an unknown call (functions
handed to it are still analysed, their effects uncertain).

A treedef is `Wrapped("pytree.treedef", <the tree with every leaf replaced by LEAF>)`:
`treedef.unflatten(leaves)` / `jax.tree.unflatten(treedef, leaves)` rebuild the tree with the
given leaves (as many as the treedef has; otherwise JAX raises, and no value follows).
"""

from __future__ import annotations

from collections.abc import Iterator

from wgmma_lsp.interpret import classes, mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.classes import NamedTupleVal
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    AllocSpec,
    ApiVal,
    ArrayVal,
    BoundMethod,
    ClassVal,
    Const,
    DictVal,
    DTypeVal,
    FuncVal,
    InstanceVal,
    PartialVal,
    RefVal,
    ShapeDtypeVal,
    TupleVal,
    Value,
    Wrapped,
)
from wgmma_lsp.models.ref_union import RefUnionSpec
from wgmma_lsp.models.registry import ATTRIBUTES, method, model

TREEDEF = "pytree.treedef"
NODE = "pytree.node"  # an object of a registered class in a treedef: Wrapped(NODE, cls, {aux, children})
LEAF = Const(Ellipsis)  # a leaf's place in a treedef's structure (`...` itself is a leaf: replaced too)
MAX_LEAVES = 256

_CERTAIN_LEAVES = (ArrayVal, RefVal, ShapeDtypeVal, DTypeVal, FuncVal, PartialVal, BoundMethod,
                   AllocSpec, RefUnionSpec, ApiVal)  # (a `RefUnion` is a leaf: not a registered node)


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
    if isinstance(tree, NamedTupleVal):
        return NamedTupleVal(tuple(_flatten(call, x, is_leaf, leaves) for x in tree.items), cls=tree.cls)
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
    if isinstance(tree, InstanceVal) and tree.cls.pytree:
        aux, children = _node_parts(call, tree)
        return Wrapped(NODE, tree.cls, {"aux": aux, "children": TupleVal(
            tuple(_flatten(call, c, is_leaf, leaves) for c in children))})
    raise _Unknown


def _node_parts(call: Call, obj: InstanceVal) -> tuple[Value, list[Value]]:
    """What JAX's registry flattens an object of a registered class into: its aux data and
    children (`tree_flatten()`; a registered dataclass's meta and data fields; a static
    class's object itself, without children)."""
    cls = obj.cls
    if cls.pytree == "static":
        return obj, []
    if cls.pytree == "node_class":
        interp = call.interp
        method = interp.getattr(obj, "tree_flatten")
        parts = mutation.live(interp, interp.call_value(method, Call(interp, call.node, [], {}, [], {}, call.env)))
        if not isinstance(parts, TupleVal) or len(parts.items) != 2:
            raise _Unknown
        children = interp.iter_items(parts.items[0])
        if children is None:
            raise _Unknown
        return parts.items[1], children
    data, meta = _dataclass_fields(cls)
    if not set(data) | set(meta) <= set(obj.attrs):
        raise _Unknown
    return DictVal(tuple((n, obj.attrs[n]) for n in meta)), [obj.attrs[n] for n in data]


def _dataclass_fields(cls: ClassVal) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A registered dataclass's data and meta fields (named, or: its fields, `static` in their
    `field(metadata=...)` the meta ones)."""
    if cls.pytree_data is not None and cls.pytree_meta is not None:
        return cls.pytree_data, cls.pytree_meta
    data: list[str] = []
    meta: list[str] = []
    for name, default in classes.dataclass_fields(cls):
        static: Value = Const(False)
        if isinstance(default, Wrapped) and default.api == "dataclasses.field":
            if "init" in default.kwargs:
                raise _Unknown  # (an init=False field is in neither list)
            md = default.kwargs.get("metadata")
            if md is not None:
                if not isinstance(md, DictVal) or md.spoiled:
                    raise _Unknown
                static = dict(md.items).get("static", Const(False))
        if not (isinstance(static, Const) and isinstance(static.value, bool)):
            raise _Unknown
        (meta if static.value else data).append(name)
    return tuple(data), tuple(meta)


def _rebuild(call: Call, structure: Value, leaves: Iterator[Value]) -> Value:
    if structure == LEAF:
        return next(leaves)
    if isinstance(structure, NamedTupleVal):
        return NamedTupleVal(tuple(_rebuild(call, x, leaves) for x in structure.items), cls=structure.cls)
    if isinstance(structure, TupleVal):
        return TupleVal(tuple(_rebuild(call, x, leaves) for x in structure.items), structure.is_list)
    if isinstance(structure, DictVal):
        return DictVal(tuple((k, _rebuild(call, v, leaves)) for k, v in structure.items))
    if isinstance(structure, Wrapped) and structure.api == NODE:
        children = structure.kwargs["children"]
        assert isinstance(children, TupleVal)
        return _unflatten_node(call, structure.func, structure.kwargs["aux"],
                               [_rebuild(call, c, leaves) for c in children.items])
    return structure  # None


def _unflatten_node(call: Call, cls: Value, aux: Value, children: list[Value]) -> Value:
    """An object of a registered class rebuilt from its aux data and children, as JAX's
    registry does: `cls.tree_unflatten(aux, children)`, a dataclass called with its fields."""
    assert isinstance(cls, ClassVal)
    interp = call.interp
    if cls.pytree == "static":
        return aux
    if cls.pytree == "node_class":
        method = interp.getattr(cls, "tree_unflatten")
        return interp.call_value(method, Call(interp, call.node, [aux, TupleVal(tuple(children))], {},
                                              [None, None], {}, call.env))
    data, _ = _dataclass_fields(cls)
    assert isinstance(aux, DictVal)
    fields = {**dict(aux.items), **dict(zip(data, children))}
    return interp.call_value(cls, Call(interp, call.node, [], fields, [], {}, call.env))


def _count(structure: Value) -> int:
    if structure == LEAF:
        return 1
    if isinstance(structure, TupleVal):
        return sum(_count(x) for x in structure.items)
    if isinstance(structure, DictVal):
        return sum(_count(v) for _, v in structure.items)
    if isinstance(structure, Wrapped) and structure.api == NODE:
        return _count(structure.kwargs["children"])
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
    if not (isinstance(treedef, Wrapped) and treedef.api == TREEDEF):
        return UNKNOWN
    items = call.interp.iter_items(mutation.live(call.interp, leaves))  # (any iterable)
    if items is None:
        return UNKNOWN
    if len(items) != _count(treedef.func):
        return UNKNOWN  # JAX raises: "Too few/many leaves for PyTreeDef"
    return _rebuild(call, treedef.func, iter(items))


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
    return _rebuild(call, structure, iter(results))


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
    if isinstance(structure, Wrapped) and structure.api == NODE:
        if not isinstance(tree, InstanceVal) or tree.cls is not structure.func:
            raise _Unknown
        children = structure.kwargs["children"]
        assert isinstance(children, TupleVal)
        own = _node_parts(call, tree)[1]
        if len(own) != len(children.items):
            raise _Unknown
        return [x for s, t in zip(children.items, own) for x in _up_to(call, s, t)]
    if isinstance(tree, Const) and tree.value is None:
        return []
    raise _Unknown

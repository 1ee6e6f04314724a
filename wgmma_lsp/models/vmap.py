"""`jax.vmap(fun, in_axes=0, out_axes=0)` (jax/_src/api.py): `fun` traced once on one example.

Each argument is a pytree; `in_axes` is an int or None for all of them, or a tuple/list with one
entry per positional argument (itself an int, None or a pytree prefix of that argument: tuples,
lists and dicts node for node, an int or None standing for all leaves below it). A
mapped array leaf loses its axis (a negative one counts from the end); an unmapped leaf (None)
is passed as it is — a Python int stays an int. Keyword arguments are mapped over axis 0. The
mapped sizes must agree (JAX raises otherwise), and at least one leaf must be mapped unless
`axis_size` is given. Every leaf of the result gets the batch axis at `out_axes` (an int for
all), an unbatched one too (JAX broadcasts it). A kernel traced inside `fun` sees the unbatched
shapes, as under JAX's batching rule.

Anything the interpreter cannot follow exactly — an axis it does not know, a leaf it does not
know, a size mismatch, an axis tree that is no prefix of its argument — leaves the result unknown (`fun` still runs when its
arguments are known).
"""

from __future__ import annotations

from wgmma_lsp.interpret import axis_env
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ArrayVal,
    Const,
    DictVal,
    TupleVal,
    Value,
    Wrapped,
    is_unknown,
)
from wgmma_lsp.models.registry import model


class _NotFollowed(Exception):
    """What JAX would raise, or what the interpreter cannot follow: the result is unknown."""


@model("jax.vmap")
def _vmap(call: Call) -> Value:
    f = call.get(0, "fun")
    if is_unknown(f) or not call.complete:
        return UNKNOWN
    options = {k: v for k, v in call.kwargs.items() if k != "fun"}
    for i, name in ((1, "in_axes"), (2, "out_axes")):
        if len(call.args) > i:
            options[name] = call.args[i]
    return Wrapped("jax.vmap", f, options, call.span)


def _axis(v: Value) -> int | None:
    if isinstance(v, Const) and (v.value is None or type(v.value) is int):
        return v.value
    raise _NotFollowed


def _unbatch(x: Value, axis: Value, sizes: list[Dim]) -> Value:
    """`x` with its mapped axis removed (per the prefix `axis`), its batch size noted."""
    if isinstance(axis, TupleVal):  # a prefix of the argument's tree: node for node
        if type(x) is not type(axis) or x.spoiled or axis.spoiled or x.is_list != axis.is_list \
                or len(x.items) != len(axis.items):
            raise _NotFollowed  # JAX raises (not a tree prefix), or the argument is not known
        return TupleVal(tuple(_unbatch(i, a, sizes) for i, a in zip(x.items, axis.items)), x.is_list)
    if isinstance(axis, DictVal):
        if not isinstance(x, DictVal) or x.spoiled or axis.spoiled \
                or {k for k, _ in x.items} != {k for k, _ in axis.items}:
            raise _NotFollowed
        axes = dict(axis.items)
        return DictVal(tuple((k, _unbatch(v, axes[k], sizes)) for k, v in x.items))
    a = _axis(axis)
    if a is None:
        return x
    if isinstance(x, Const) and x.value is None:
        return x  # an empty pytree
    if isinstance(x, TupleVal):
        return TupleVal(tuple(_unbatch(i, axis, sizes) for i in x.items), x.is_list)
    if isinstance(x, DictVal):
        return DictVal(tuple((k, _unbatch(v, axis, sizes)) for k, v in x.items))
    if not isinstance(x, ArrayVal) or x.shape is None:
        raise _NotFollowed  # a number mapped over (JAX raises), or an unknown leaf
    n = len(x.shape)
    if not -n <= a < n:
        raise _NotFollowed  # out of bounds: JAX raises
    a %= n
    sizes.append(x.shape[a])
    return ArrayVal(x.shape[:a] + x.shape[a + 1:], x.dtype, jax=True)


def _batch(y: Value, out_axis: int, size: Dim) -> Value:
    """A result leaf with the batch axis inserted at `out_axis`."""
    if isinstance(y, TupleVal):
        return TupleVal(tuple(_batch(i, out_axis, size) for i in y.items), y.is_list)
    if isinstance(y, DictVal):
        return DictVal(tuple((k, _batch(v, out_axis, size)) for k, v in y.items))
    if isinstance(y, Const) and y.value is None:
        return y  # an empty pytree
    if not isinstance(y, ArrayVal) or y.shape is None:
        return UNKNOWN  # (a Python number becomes a broadcast array: its dtype is not followed)
    n = len(y.shape) + 1
    if not -n <= out_axis < n:
        return UNKNOWN  # JAX raises
    a = out_axis % n
    return ArrayVal(y.shape[:a] + (size,) + y.shape[a:], y.dtype, jax=True)


@model("jax.vmap()")
def _vmap_apply(call: Call) -> Value:
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    in_axes = wrapped.kwargs.get("in_axes", Const(0))
    out_axes = wrapped.kwargs.get("out_axes", Const(0))
    sizes: list[Dim] = []
    try:
        if not call.complete:
            raise _NotFollowed
        if isinstance(in_axes, TupleVal):
            if len(in_axes.items) != len(call.args):
                raise _NotFollowed  # JAX raises: one entry per positional argument
            per_arg = list(in_axes.items)
        elif isinstance(in_axes, Const):
            per_arg = [in_axes] * len(call.args)
        else:
            raise _NotFollowed
        args = [_unbatch(a, ax, sizes) for a, ax in zip(call.args, per_arg)]
        kwargs = {k: _unbatch(v, Const(0), sizes) for k, v in call.kwargs.items()}
    except _NotFollowed:
        return UNKNOWN
    if not sizes and "axis_size" not in wrapped.kwargs:
        return UNKNOWN  # JAX raises: nothing is mapped
    size: Dim = sizes[0] if sizes else None
    for s in sizes[1:]:
        same = D.equal(size, s)
        if same is False:
            return UNKNOWN  # JAX raises: the mapped sizes differ
        if same is None:
            size = None
    if "axis_size" in wrapped.kwargs:
        given = wrapped.kwargs["axis_size"]
        size = given.value if isinstance(given, Const) and type(given.value) is int else size
    inner = Call(call.interp, call.node, args, kwargs, list(call.arg_nodes), dict(call.kw_nodes), call.env)
    # `axis_name=` binds a name for the function's collectives (batching.py: extend_axis_env_nd)
    name = wrapped.kwargs.get("axis_name", Const(None))
    names: tuple[str, ...] | None = None  # (not known: unknown keywords, a computed name)
    if "?" not in wrapped.kwargs and isinstance(name, Const):
        if name.value is None:
            names = ()
        elif isinstance(name.value, str):
            names = (name.value,)
    with axis_env.extended(names):
        result = call.interp.call_value(wrapped.func, inner)
    if not (isinstance(out_axes, Const) and type(out_axes.value) is int):
        return UNKNOWN
    return _batch(result, out_axes.value, size)

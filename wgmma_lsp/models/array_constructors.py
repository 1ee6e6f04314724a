"""jax.numpy and jax.lax functions that make arrays: `jnp.zeros` / `ones` / `empty` / `full` (and
their `_like` forms), `jnp.asarray`, `jnp.arange`, `lax.broadcasted_iota`, and
`jax.ShapeDtypeStruct` (and `.like`).

The shapes and dtypes JAX gives them (a Python scalar stays weakly typed); constants of
`jnp.zeros`/`ones`/`full` are in Mosaic GPU's splat register layout (`SPLAT`).
"""

from __future__ import annotations

from dataclasses import replace

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import operators
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN, ArrayVal, Const, InstanceVal, ShapeDtypeVal, TupleVal, Value, as_dim,
)
from wgmma_lsp.models.arrays import FLOAT32, INT32, _shape_arg, as_array, dtype_of, strong, to_dtype
from wgmma_lsp.models.registry import model


# Mosaic GPU gives constants built by jnp.zeros/ones/full a splat register layout (not WGMMA).
SPLAT = "splat"


@model("jnp.empty", "lax.zeros")
def _empty(call: Call) -> Value:
    dt = call.get(1, "dtype", Const(None))
    dtype = FLOAT32 if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(_shape_arg(call.get(0, "shape")), dtype, jax=True)


@model("jnp.zeros", "jnp.ones")
def _zeros(call: Call) -> Value:
    v = _empty(call)
    assert isinstance(v, ArrayVal)
    return ArrayVal(v.shape, v.dtype, SPLAT, jax=True)


@model("jnp.full")
def _full(call: Call) -> Value:
    shape = _shape_arg(call.get(0, "shape"))
    fill = call.get(1, "fill_value")
    dt = call.get(2, "dtype", Const(None))
    if isinstance(dt, Const) and dt.value is None:
        dtype = dtype_of(fill)
        if isinstance(fill, ArrayVal):
            dtype = strong(dtype)
    else:
        dtype = to_dtype(dt)
    return ArrayVal(shape, dtype, SPLAT if isinstance(fill, Const) else None, jax=True)


@model("jnp.zeros_like", "jnp.ones_like", "jnp.empty_like")
def _zeros_like(call: Call) -> Value:
    x = as_array(call.get(0))
    dt = call.get(1, "dtype", Const(None))
    shape_v = call.get(99, "shape", Const(None))
    if x is None:
        return UNKNOWN
    dtype = strong(x.dtype) if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    shape = x.shape if isinstance(shape_v, Const) and shape_v.value is None else _shape_arg(shape_v)
    return ArrayVal(shape, dtype, jax=True)


@model("jnp.full_like")
def _full_like(call: Call) -> Value:
    x = as_array(call.get(0))
    dt = call.get(2, "dtype", Const(None))
    if x is None:
        return UNKNOWN
    dtype = strong(x.dtype) if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(x.shape, dtype, jax=True)


def _literal_array(v: Value) -> ArrayVal | None:
    """A (nested) list/tuple of scalars and arrays as `np.array` reads it: its shape, and the
    (strong) dtype its items promote to; None when ragged or not all known."""
    if isinstance(v, TupleVal):
        items = [_literal_array(x) for x in v.items]
        if not items or any(i is None or i.shape is None or i.dtype is None for i in items):
            return None
        shape = items[0].shape  # type: ignore[union-attr]
        if any(D.shapes_equal(i.shape, shape) is not True for i in items):  # type: ignore[union-attr]
            return None
        dt = T.result_type(*[i.dtype for i in items])  # type: ignore[misc]
        return ArrayVal((len(items), *shape), strong(dt)) if dt is not None else None  # type: ignore[misc]
    return as_array(v)


@model("jnp.asarray")
def _asarray(call: Call) -> Value:
    """`jnp.asarray(a, dtype=None)` (and `jnp.array`): a Python scalar stays weakly typed, a
    list of scalars is strongly typed with the dtype its items promote to; an object of a user
    class defining `__jax_array__` is what that returns."""
    x = call.get(0)
    dt = call.get(1, "dtype", Const(None))
    if isinstance(x, InstanceVal):
        converted = operators.jax_array(call.interp, x)
        if converted is None:
            return UNKNOWN
        x = converted
    arr = _literal_array(x)
    if arr is None:
        return UNKNOWN
    if not (isinstance(dt, Const) and dt.value is None):
        return ArrayVal(arr.shape, strong(to_dtype(dt)), jax=True)
    if isinstance(x, ArrayVal):
        return x if x.jax else replace(x, jax=True)  # a NumPy array becomes a jax.Array
    return replace(arr, jax=True)  # a Python scalar keeps its weak type (`jnp.asarray(0.0)`); a list is strong


@model("jnp.arange")
def _arange(call: Call) -> Value:
    if len(call.args) == 1 and not call.kwargs.keys() - {"dtype"}:
        n = as_dim(call.args[0])
        dt = call.get(99, "dtype", Const(None))
        dtype = INT32 if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
        return ArrayVal((n,), dtype, jax=True)
    return UNKNOWN


@model("lax.broadcasted_iota", "plgpu.broadcasted_iota")
def _iota(call: Call) -> Value:
    return ArrayVal(_shape_arg(call.get(1, "shape")), to_dtype(call.get(0, "dtype")))


@model("jax.ShapeDtypeStruct")
def _sds(call: Call) -> Value:
    return ShapeDtypeVal(ArrayVal(_shape_arg(call.get(0, "shape")), to_dtype(call.get(1, "dtype"))))


@model("jax.ShapeDtypeStruct.like")
def _sds_like(call: Call) -> Value:
    """`jax.ShapeDtypeStruct.like(x)`: the shape and dtype of an array or of another
    ShapeDtypeStruct (a ref: JAX raises NotImplementedError, unknown here)."""
    x = call.get(0, "x")
    arr = x.array if isinstance(x, ShapeDtypeVal) else x if isinstance(x, ArrayVal) else None
    if arr is None:
        return UNKNOWN
    return ShapeDtypeVal(ArrayVal(arr.shape, arr.dtype))

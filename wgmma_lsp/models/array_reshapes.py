"""jax.numpy and jax.lax functions that convert or reshape arrays: `astype` (and
`lax.convert_element_type`), `reshape`, `transpose` (and `x.T`, `x.mT`), `swapaxes`,
`broadcast_to`, `expand_dims`, `squeeze`, `concatenate` and `stack`: the shape and dtype of the
result. (`lax.collapse`: shape_ops.py; tiled reshapes of Mosaic GPU layouts: tiled_reshapes.py.)
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value, as_dim, as_shape
from wgmma_lsp.models.arrays import _axes, _shape_arg, as_array, promote_values, strong, to_dtype
from wgmma_lsp.models.registry import attribute, method, model


def astype(x: Value, dt: Value, jax: bool = False) -> Value:
    """`x` as dtype `dt`: a JAX function's result is a jax.Array (`jax`), a method's is of the
    kind `x` was (NumPy's `astype` gives a NumPy array)."""
    arr = as_array(x)
    if arr is None:
        return UNKNOWN
    return ArrayVal(arr.shape, to_dtype(dt), arr.layout, jax=jax or arr.jax)


@method("array.astype")
def _m_astype(obj: Value, call: Call) -> Value:
    return astype(obj, call.get(0, "dtype"))


@model("jnp.astype", "lax.convert_element_type")
def _astype(call: Call) -> Value:
    return astype(call.get(0), call.get(1, "dtype" if "dtype" in call.kwargs else "new_dtype"), jax=True)


def reshape(x: ArrayVal, shape: tuple[Dim, ...] | None) -> Value:
    if shape is None:
        return ArrayVal(None, x.dtype)
    if any(isinstance(d, int) and d == -1 for d in shape):
        if sum(1 for d in shape if isinstance(d, int) and d == -1) != 1 or x.shape is None:
            return ArrayVal(None, x.dtype)
        total: Dim = 1
        for d in x.shape:
            total = D.mul(total, d)
        rest: Dim = 1
        for d in shape:
            if not (isinstance(d, int) and d == -1):
                rest = D.mul(rest, d)
        if D.equal(total, rest) is True:
            inferred: Dim = 1
        elif isinstance(rest, int) and rest > 0:
            inferred = D.floordiv(total, rest)
        else:
            inferred = None
        shape = tuple(inferred if isinstance(d, int) and d == -1 else d for d in shape)
    if x.shape is not None and _size(x.shape) is not None and _size(shape) is not None \
            and D.equal(_size(x.shape), _size(shape)) is False:
        return UNKNOWN  # JAX raises its own TypeError here ("cannot reshape array of shape ...")
    return ArrayVal(shape, x.dtype)


def _size(shape: tuple[Dim, ...]) -> Dim:
    total: Dim = 1
    for d in shape:
        if d is None:
            return None
        total = D.mul(total, d)
    return total


@method("array.reshape")
def _m_reshape(obj: Value, call: Call) -> Value:
    assert isinstance(obj, ArrayVal)
    if len(call.args) == 1:
        return reshape(obj, as_shape(call.args[0]))
    if "shape" in call.kwargs:
        return reshape(obj, as_shape(call.kwargs["shape"]))
    return reshape(obj, tuple(as_dim(a) for a in call.args))


@model("jnp.reshape", "lax.reshape")
def _reshape(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return reshape(x, as_shape(call.get(1, "shape" if "shape" in call.kwargs else "new_sizes")))


def transpose(x: ArrayVal, axes: Value | None) -> Value:
    if x.shape is None:
        return ArrayVal(None, x.dtype)
    if axes is None or (isinstance(axes, Const) and axes.value is None):
        return ArrayVal(tuple(reversed(x.shape)), x.dtype)
    if isinstance(axes, TupleVal):
        perm = [a.value if isinstance(a, Const) else None for a in axes.items]
        if all(isinstance(p, int) for p in perm) and sorted(perm) == list(range(len(x.shape))):  # type: ignore[type-var]
            return ArrayVal(tuple(x.shape[p] for p in perm), x.dtype)  # type: ignore[index]
    return ArrayVal(None, x.dtype)


@attribute("array.T")
def _a_T(obj: ArrayVal) -> Value:
    return transpose(obj, None)


@attribute("array.mT")
def _a_mT(obj: ArrayVal) -> Value:
    if obj.shape is None or len(obj.shape) < 2:
        return ArrayVal(None, obj.dtype)
    return ArrayVal(obj.shape[:-2] + (obj.shape[-1], obj.shape[-2]), obj.dtype)


@method("array.transpose")
def _m_transpose(obj: Value, call: Call) -> Value:
    assert isinstance(obj, ArrayVal)
    if not call.args:
        return transpose(obj, None)
    if len(call.args) == 1:
        return transpose(obj, call.args[0])
    return transpose(obj, TupleVal(tuple(call.args)))


@model("jnp.transpose", "lax.transpose")
def _transpose(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return transpose(x, call.get(1, "axes" if "axes" in call.kwargs else "permutation", Const(None)))


@model("jnp.swapaxes")
def _swapaxes(call: Call) -> Value:
    x = as_array(call.get(0))
    a, b = call.get(1), call.get(2)
    if x is None or x.shape is None or not (isinstance(a, Const) and isinstance(b, Const)):
        return UNKNOWN
    s = list(x.shape)
    try:
        s[a.value], s[b.value] = s[b.value], s[a.value]
    except Exception:
        return UNKNOWN
    return ArrayVal(tuple(s), x.dtype)


@model("jnp.broadcast_to", "lax.broadcast_in_dim")
def _broadcast_to(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return ArrayVal(_shape_arg(call.get(1, "shape")), strong(x.dtype) if isinstance(call.get(0), ArrayVal) else x.dtype)


@model("jnp.expand_dims")
def _expand_dims(call: Call) -> Value:
    x = as_array(call.get(0))
    ax = call.get(1, "axis")
    if x is None or x.shape is None or not isinstance(ax, Const) or not isinstance(ax.value, int):
        return UNKNOWN
    s = list(x.shape)
    pos = ax.value if ax.value >= 0 else len(s) + 1 + ax.value
    s.insert(pos, 1)
    return ArrayVal(tuple(s), x.dtype)


@model("jnp.squeeze")
def _squeeze(call: Call) -> Value:
    x = as_array(call.get(0))
    ax = call.get(1, "axis", Const(None))
    if x is None or x.shape is None:
        return UNKNOWN
    if isinstance(ax, Const) and ax.value is None:
        if all(isinstance(d, int) for d in x.shape):
            return ArrayVal(tuple(d for d in x.shape if d != 1), x.dtype)
        return ArrayVal(None, x.dtype)
    axes = _axes(ax, len(x.shape))
    if axes is None:
        return ArrayVal(None, x.dtype)
    return ArrayVal(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


@model("jnp.concatenate", "lax.concatenate")
def _concatenate(call: Call) -> Value:
    seq = call.get(0, "arrays" if "arrays" in call.kwargs else "operands")
    axis = call.get(1, "axis" if "axis" in call.kwargs else "dimension", Const(0))
    if not isinstance(seq, TupleVal) or not seq.items or not isinstance(axis, Const):
        return UNKNOWN
    arrays = [as_array(a) for a in seq.items]
    if any(a is None or a.shape is None for a in arrays):
        return UNKNOWN
    dt = promote_values(*seq.items)
    shapes = [a.shape for a in arrays]  # type: ignore[union-attr]
    ndim = len(shapes[0])  # type: ignore[arg-type]
    ax = axis.value if axis.value >= 0 else ndim + axis.value
    out = list(shapes[0])  # type: ignore[arg-type]
    total: Dim = 0
    for s in shapes:
        total = D.add(total, s[ax])  # type: ignore[index]
    out[ax] = total
    return ArrayVal(tuple(out), strong(dt))


@model("jnp.stack")
def _stack(call: Call) -> Value:
    seq = call.get(0)
    axis = call.get(1, "axis", Const(0))
    if not isinstance(seq, TupleVal) or not seq.items or not isinstance(axis, Const):
        return UNKNOWN
    first = as_array(seq.items[0])
    if first is None or first.shape is None:
        return UNKNOWN
    s = list(first.shape)
    ax = axis.value if axis.value >= 0 else len(s) + 1 + axis.value
    s.insert(ax, len(seq.items))
    return ArrayVal(tuple(s), strong(promote_values(*seq.items)))

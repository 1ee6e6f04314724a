"""jax.numpy reductions and their array methods (`jnp.sum(x, axis)`, `x.max(axis=-1)`, `mean`,
`argmax`, `any`, `var`, ...): the shape (with `keepdims`) and dtype JAX gives the result, and the
shared-memory scratch a reduction in a kernel takes (smem_budget.py).
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, Value
from wgmma_lsp.models import smem_budget
from wgmma_lsp.models.arrays import BOOL, INT32, _axes, _float_result, as_array, strong
from wgmma_lsp.models.registry import METHODS, model


def reduce(x: Value, axis: Value, keepdims: Value, dtype_rule: str) -> Value:
    arr = as_array(x)
    if arr is None:
        return UNKNOWN
    dt = strong(arr.dtype)
    if dt is not None and dt.symbolic and dtype_rule in ("sum", "mean"):
        dt = None  # the sum of small ints widens, the mean of ints is a float: it depends
    if dt is not None:
        if dtype_rule == "sum" and (T.is_bool(dt) or (T.is_integer(dt) and T.itemsize_bits(dt) < 32)):
            dt = DType("uint32") if T.is_unsigned_integer(dt) else INT32
        elif dtype_rule == "mean":
            dt = _float_result(dt)
        elif dtype_rule == "arg":
            dt = INT32
        elif dtype_rule == "bool":
            dt = BOOL
    if arr.shape is None:
        return ArrayVal(None, dt)
    kd = keepdims.value if isinstance(keepdims, Const) else None
    if kd is None and not (isinstance(keepdims, Const)):
        return ArrayVal(None, dt)
    if isinstance(axis, Const) and axis.value is None:
        return ArrayVal(tuple(1 for _ in arr.shape) if kd else (), dt)
    axes = _axes(axis, len(arr.shape))
    if axes is None:
        return ArrayVal(None, dt)
    shape = tuple((1 if kd else None) if i in axes else d for i, d in enumerate(arr.shape))
    if not kd:
        shape = tuple(d for i, d in enumerate(arr.shape) if i not in axes)
    return ArrayVal(shape, dt)


def _reduction(rule: str, name: str):
    def fn(call: Call) -> Value:
        smem_budget.reduction(call.interp, name, call.span)  # a kernel's reduction scratch
        return reduce(call.get(0), call.get(1, "axis", Const(None)), call.get(99, "keepdims", Const(False)), rule)

    def meth(obj: Value, call: Call) -> Value:
        smem_budget.reduction(call.interp, name, call.span)
        return reduce(obj, call.get(0, "axis", Const(None)), call.get(99, "keepdims", Const(False)), rule)
    return fn, meth


for _n, _rule in {"sum": "sum", "prod": "sum", "max": "same", "min": "same", "amax": "same",
                  "amin": "same", "mean": "mean", "argmax": "arg", "argmin": "arg",
                  "any": "bool", "all": "bool", "var": "mean", "std": "mean"}.items():
    _f, _mt = _reduction(_rule, _n)
    model(f"jnp.{_n}")(_f)
    METHODS[f"array.{_n}"] = _mt

"""Shape-only array functions of `jax.lax` that are not in `arrays.py`: `lax.collapse`."""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, Value
from wgmma_lsp.models.arrays import as_array
from wgmma_lsp.models.registry import model


@model("lax.collapse")
def _collapse(call: Call) -> Value:
    """`lax.collapse(operand, start_dimension, stop_dimension=None)` (jax/_src/lax/lax.py,
    `collapse`): dimensions `[start, stop)`, read as `slice(start, stop).indices(ndim)`, become
    one of their product; a range that ends before it starts raises (no value)."""
    x = as_array(call.get(0, "operand"))
    if x is None:
        return UNKNOWN
    start = call.get(1, "start_dimension")
    stop = call.get(2, "stop_dimension", Const(None) if call.complete else None)
    if x.shape is None or not isinstance(start, Const) or not isinstance(stop, Const) \
            or type(start.value) is not int or not (stop.value is None or type(stop.value) is int):
        return ArrayVal(None, x.dtype)
    lo, hi, _ = slice(start.value, stop.value).indices(len(x.shape))
    if hi < lo:
        return UNKNOWN  # JAX raises "Invalid dimension range passed to collapse"
    size: Dim = 1
    for d in x.shape[lo:hi]:
        size = D.mul(size, d)
    return ArrayVal(x.shape[:lo] + (size,) + x.shape[hi:], x.dtype)

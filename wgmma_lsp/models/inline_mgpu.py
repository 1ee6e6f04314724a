"""`plgpu.inline_mgpu(arg_types=..., return_type=...)`: Mosaic GPU code inlined into a kernel.

`inline_mgpu(...)` returns a decorator; the decorated function, called in a kernel, gives what its
`inline_mgpu_p` primitive's abstract eval gives (jax/_src/pallas/mosaic_gpu/primitives.py): one
array of each `plgpu.ShapeDtypeStruct` leaf of `return_type` (its shape and dtype), put back in
`return_type`'s pytree (`None` when there is none). The inlined code itself (MLIR, written
against `mosaic_gpu`) is not followed: the refs and arrays passed to it are handed to code the
analysis does not see, as to any unfollowed call (`interp.unknown_call`: the race analysis and the
generators' bookkeeping hear of them). Its own checks (argument pytrees against `arg_types`) are
not modelled: nothing is reported here.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ArrayVal,
    Const,
    ShapeDtypeVal,
    TupleVal,
    Value,
    Wrapped,
)
from wgmma_lsp.models.registry import model

DECORATOR = "plgpu.inline_mgpu_decorator"
INLINED = "plgpu.inline_mgpu_function"


@model("plgpu.inline_mgpu")
def _inline_mgpu(call: Call) -> Value:
    if call.args or not call.complete:  # keyword-only in JAX; `**kwargs` not known: nothing claimed
        return UNKNOWN
    return Wrapped(DECORATOR, UNKNOWN, {"return_type": call.kwargs.get("return_type", Const(None))},
                   call.span)


@model(f"{DECORATOR}()")
def _decorate(call: Call) -> Value:
    wrapped = call.wrapped
    if not isinstance(wrapped, Wrapped) or len(call.args) != 1 or call.kwargs:
        return UNKNOWN
    return Wrapped(INLINED, call.args[0], dict(wrapped.kwargs), call.span)


@model(f"{INLINED}()")
def _call_inlined(call: Call) -> Value:
    wrapped = call.wrapped
    call.interp.unknown_call(call)
    if not isinstance(wrapped, Wrapped):
        return UNKNOWN
    return _returned(wrapped.kwargs.get("return_type", UNKNOWN))


def _returned(return_type: Value) -> Value:
    """The arrays a `return_type` pytree of ShapeDtypeStructs stands for (UNKNOWN for anything
    else: another leaf makes JAX raise when the decorator is made)."""
    if isinstance(return_type, Const) and return_type.value is None:
        return Const(None)
    if isinstance(return_type, ShapeDtypeVal):
        arr = return_type.array
        return ArrayVal(arr.shape, arr.dtype, jax=True) if arr.shape is not None else UNKNOWN
    if isinstance(return_type, TupleVal):
        items = [_returned(v) for v in return_type.items]
        if any(v is UNKNOWN or (isinstance(v, Const) and v.value is None) for v in items):
            return UNKNOWN  # a None leaf is an empty subtree: not followed
        return TupleVal(tuple(items), return_type.is_list)
    return UNKNOWN

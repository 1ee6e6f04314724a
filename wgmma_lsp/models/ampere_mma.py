"""Ampere's MMA in a Mosaic GPU kernel: `plgpu.mma(acc, a, b)` (JAX 0.12; sm80 kernels).

Mirrors `jax._src.pallas.mosaic_gpu.primitives._mma_abstract_eval`, in its order: the three
shapes must chain (WG105), the operands share one dtype (WG106), floating operands accumulate in
float64/float32/float16 (WG107), integer and boolean operands in int32 (WG108); then the layout
checks, not modelled. The value is the accumulator's: the primitive returns `acc`'s aval. A
check that cannot be decided (a symbolic size or dtype) stops the checks after it silently. JAX
0.10 has no `plgpu.mma`: the call never reaches this model there (WG091 at the attribute).
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Value
from wgmma_lsp.models.registry import model
from wgmma_lsp.rules import (
    mma_accumulator_dtype,
    mma_integer_accumulator,
    mma_operand_dtypes,
    mma_shapes,
)

_FLOAT_ACCUMULATORS = ("float64", "float32", "float16")


@model("plgpu.mma")
def _mma(call: Call) -> Value:
    acc, a, b = call.get(0), call.get(1), call.get(2)
    if not isinstance(acc, ArrayVal):
        return UNKNOWN
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal):
        _check(call, acc, a, b)
    return acc


def _check(call: Call, acc: ArrayVal, a: ArrayVal, b: ArrayVal) -> None:
    if acc.shape is None or a.shape is None or b.shape is None:
        return  # a rank not known: nothing decided
    if len(acc.shape) != 2 or len(a.shape) != 2 or len(b.shape) != 2:
        return  # JAX fails unpacking the shapes: not one of these messages
    (m, n), (m2, k), (k2, n2) = acc.shape, a.shape, b.shape
    chained = [D.equal(x, y) for x, y in ((m, m2), (n, n2), (k, k2))]
    if False in chained:
        msg = (f"Incompatible shapes for matrix multiplication: lhs={D.format_shape(a.shape)},"
               f" rhs={D.format_shape(b.shape)}, acc={D.format_shape(acc.shape)}")
        call.interp.report(mma_shapes.RULE, msg, call.span, call.line)
        return
    if None in chained:
        return
    same = T.same(a.dtype, b.dtype)
    if same is False:
        msg = f"Operand dtypes must match: {a.dtype} != {b.dtype}"
        call.interp.report(mma_operand_dtypes.RULE, msg, call.span, call.line)
        return
    if same is None or a.dtype is None or a.dtype.symbolic or acc.dtype is None or acc.dtype.symbolic:
        return
    acc_name = T.canonicalize(acc.dtype).name
    if (T.is_integer(a.dtype) or T.is_bool(a.dtype)) and acc_name != "int32":
        msg = f"Only int32 accumulator supported for integer and boolean operands. Got {acc.dtype.name}"
        call.interp.report(mma_integer_accumulator.RULE, msg, call.span, call.line)
    elif T.is_floating(a.dtype) and acc_name not in _FLOAT_ACCUMULATORS:
        msg = ("Only float64, float32 and float16 accumulators supported for floating operands."
               f" Got {acc.dtype.name}")
        call.interp.report(mma_accumulator_dtype.RULE, msg, call.span, call.line)

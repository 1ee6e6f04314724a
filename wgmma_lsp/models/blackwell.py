"""Blackwell: TMEM allocations and `plgpu.tcgen05_mma`.

Mirrors, in JAX's order of checks:
- `jax._src.pallas.mosaic_gpu.core.MemorySpace.__call__` and `infer_tmem_layout`
  (`jax.experimental.mosaic.gpu.tcgen05._infer_tmem_layout`): what a TMEM allocation may be;
- `jax._src.pallas.mosaic_gpu.primitives.tcgen05_mma` (shape checks) and
  `_tcgen05_mma_abstract_eval` (memory spaces).
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import Const, RefVal, TupleVal, Value
from wgmma_lsp.models.registry import model
from wgmma_lsp.rules import (
    memory_space_arguments, tcgen05_memory_spaces, tcgen05_shapes, tmem_narrow_dtype, tmem_rows,
    tmem_transforms,
)

TMEM_ROWS = 128


def _given(call: Call, name: str) -> bool | None:
    """Was the keyword passed with a value other than None? (None: cannot tell)."""
    if name not in call.kwargs:
        return False if call.complete else None
    v = call.kwargs[name]
    if isinstance(v, Const):
        return v.value is not None
    return True


def check_allocation(call: Call, kind: str, shape: tuple | None, dtype: DType | None) -> bool:
    """Report what `MemorySpace.__call__` raises; False when JAX raises (proven)."""
    interp = call.interp
    if kind != "tmem":
        if any(_given(call, k) for k in ("packed", "collective", "layout")):
            interp.report(memory_space_arguments.RULE, memory_space_arguments.MESSAGE, call.span,
                          call.line)
            return False
        return True
    transforms = call.kwargs.get("transforms")
    if transforms is not None and ((isinstance(transforms, TupleVal) and transforms.items)
                                   or (isinstance(transforms, Const) and transforms.value)):
        interp.report(tmem_transforms.RULE, tmem_transforms.MESSAGE, call.span_of(99, "transforms"),
                      call.line)
        return False
    layout, packed = _given(call, "layout"), _given(call, "packed")
    if layout is not False or packed is None:
        return True  # an explicit layout (or unknown arguments): other checks
    if not packed:
        if dtype is None:
            return True
        if T.itemsize_bits(dtype) != 32:
            interp.report(tmem_narrow_dtype.RULE, tmem_narrow_dtype.MESSAGE, call.span_of(1, "dtype"),
                          call.line, data={"call_span": call.span})
            return False
        packing = 1
    else:
        p = call.kwargs.get("packed")
        if not (isinstance(p, Const) and isinstance(p.value, bool)) or dtype is None:
            return True
        packing = 32 // T.itemsize_bits(dtype) if p.value else 1
    if shape is None or len(shape) < 2 or not all(isinstance(d, int) for d in shape[-2:]):
        return True
    rows, cols = shape[-2], shape[-1]
    if packing > 8 or bin(packing).count("1") != 1 or cols % packing:  # type: ignore[operator]
        return True  # other messages
    if rows not in (TMEM_ROWS, TMEM_ROWS // 2):
        interp.report(tmem_rows.RULE,
                      f"Unsupported shape: {D.format_shape(shape[-2:])}. TMEM references must have "
                      f"either {TMEM_ROWS} or {TMEM_ROWS // 2} rows, but got {rows}.",
                      call.span_of(0, "shape"), call.line)
        return False
    return True


def _space(v: Value) -> str | None:
    if isinstance(v, RefVal):
        space = v.root().space
        return space if space in ("smem", "gmem", "tmem", "regs") else None
    return None


@model("plgpu.tcgen05_mma")
def _tcgen05_mma(call: Call) -> Value:
    interp = call.interp
    acc, a, b = call.get(0, "acc"), call.get(1, "a"), call.get(2, "b")
    shapes = [x.shape if isinstance(x, RefVal) else None for x in (acc, a, b)]
    if any(s is None or len(s) != 2 for s in shapes) or not call.complete:
        return Const(None)
    if _given(call, "a_sparse_metadata") is not False:
        return Const(None)  # sparse: K doubles, not modelled
    (acc_m, acc_n), (lhs_m, lhs_k), (rhs_k, rhs_n) = shapes  # type: ignore[misc]
    collective = _given(call, "collective_axis")
    if collective is None:
        return Const(None)
    fs = D.format_shape
    checks = [
        (D.equal(acc_m, lhs_m),
         "Accumulator and LHS have incompatible shapes. Expected LHS to have shape (m, k) and "
         f"accumulator to have shape (m, n). Accumulator: {fs(shapes[0])}. LHS: {fs(shapes[1])}."),
        (D.equal(acc_n, D.mul(rhs_n, 2)) if collective else D.equal(acc_n, rhs_n),
         ("Accumulator and RHS have incompatible shapes. Expected RHS to have shape (k, n) and "
          f"accumulator to have shape (m, n * 2) in collective mode. Accumulator: {fs(shapes[0])}. "
          f"RHS: {fs(shapes[2])}.") if collective else
         ("Accumulator and RHS have incompatible shapes. Expected RHS to have shape (k, n) and "
          f"accumulator to have shape (m, n). Accumulator: {fs(shapes[0])}. RHS: {fs(shapes[2])}.")),
        (D.equal(lhs_k, rhs_k),
         f"LHS and RHS have incompatible shapes. LHS: {fs(shapes[1])}. RHS: {fs(shapes[2])}."),
    ]
    for ok, message in checks:
        if ok is False:
            interp.report(tcgen05_shapes.RULE, message, call.span, call.line)
            return Const(None)
        if ok is None:
            return Const(None)
    if _given(call, "a_scale") is not False or _given(call, "b_scale") is not False:
        return Const(None)  # block-scaled MMA: its own checks
    spaces = [_space(acc), _space(a), _space(b)]
    for i, (allowed, message) in enumerate([
            (("tmem",), "Accumulator must be a TMEM Ref."),
            (("smem", "tmem"), "LHS must be a TMEM/SMEM Ref."),
            (("smem",), "RHS must be an SMEM Ref.")]):
        if spaces[i] is None:
            return Const(None)
        if spaces[i] not in allowed:
            arg = call.get(i)
            related, data = [], {"operand": ("acc", "a", "b")[i]}
            if isinstance(arg, RefVal) and arg.root().origin is not None:
                from wgmma_lsp.rules.base import Related

                root = arg.root()
                related = [Related(root.origin, f"allocated here as {root.aval()}")]
                data.update(alloc_span=root.origin, alloc_kind=root.space,
                            bits=T.itemsize_bits(root.dtype) if root.dtype is not None else None)
            interp.report(tcgen05_memory_spaces.RULE, message, call.span_of(i, ("acc", "a", "b")[i]),
                          call.line, related=related, data=data)
            return Const(None)
    return Const(None)

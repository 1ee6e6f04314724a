"""A WGMMA-layout array stored straight to GMEM, planned as JAX 0.12 plans it: WG121.

JAX 0.12's Mosaic GPU lowering stores an array in a tiled register layout to a GMEM ref with an
optimized transfer (`FragmentedArray.store_untiled` -> `store_tiled` -> `transfer_tiled`, which
calls `plan_gmem_transfer`, ported in models/gmem_transfer_plan.py); where the threads' accesses
would not cover whole 32-byte sectors or 128-byte cache lines it raises
`TransferPlanDerivationError` (an accumulator's value cast to bfloat16 and stored to the kernel's
output: each row's four threads write 16 bytes, half a sector). `ref[...] = value` (swap) and
`plgpu.store(ref, value)` plan it; `plgpu.store(..., optimized=False)` does not. JAX 0.10 plans
no GMEM transfer.

Blame: Lane lowering raises on the store's line; Warpgroup lowering (the MLIR dialect's
lowering, after tracing) raises with no line of the kernel in its traceback: JAX blames the
kernel's launch (a kernel-level error, as models/tma_lowering.py's).

Claimed only where every input is known: the value's layout is the WGMMA layout (an
accumulator's `acc_ref[...]`, or a whole tiled+swizzled SMEM load under Lane semantics,
`lane_layouts.WGMMA_LOADED`), cast or not (`astype` keeps the layout; arithmetic forgets it
here); a floating-point dtype of 8, 16 or 32 bits; the ref a `plgpu.kernel` GMEM operand (a
whole array: contiguous) or a view of one through slices (`.at[pl.ds(...)]`) that keep its rank,
of known sizes; JAX 0.12.0.1 and 0.12.1.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import ArrayVal, Const, RefVal, Value
from wgmma_lsp.models import refs, store_api  # noqa: F401 - their ref and plgpu.store models are wrapped
from wgmma_lsp.models.gmem_transfer_plan import (
    WGMMA, TilingError, contiguous_strides, gmem_transfer_failure, store_nested,
)
from wgmma_lsp.models.indexing import index_shape
from wgmma_lsp.models.lane_layouts import WGMMA_LOADED
from wgmma_lsp.models.registry import GETITEM, MODELS, SETITEM
from wgmma_lsp.models.user_spelling import module_alias
from wgmma_lsp.rules import gmem_transfer_plan
from wgmma_lsp.rules.base import Related, kernel_level_note
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: The layout of an accumulator's value (`acc_ref[...]`): JAX's WGMMA_LAYOUT, in either semantics.
WGMMA_ACC = "wgmma (accumulator)"
WGMMA_LAYOUTS = (WGMMA_ACC, WGMMA_LOADED)
#: The JAX versions whose GMEM transfer plan is ported (the same code in both).
PLANNED = ((0, 12),)
_FLOATS = {"bfloat16", "float16", "float32", "float8_e4m3fn", "float8_e5m2"}


def _whole(index: Value) -> bool:
    return isinstance(index, Const) and index.value is Ellipsis


def _int_shape(shape: Any) -> tuple[int, ...] | None:
    if shape is None or not all(type(d) is int for d in shape):
        return None
    return tuple(shape)


def failure(ref: RefVal, index: Value, value: ArrayVal) -> str | None:
    """JAX's TransferPlanDerivationError message for storing `value` through `ref[index]`, or
    None (planned, or not decided here)."""
    if value.layout not in WGMMA_LAYOUTS or T.concrete(value.dtype) is None or value.dtype.name not in _FLOATS:
        return None
    root = ref.root()
    if root.kind != "plain" or root.space != "gmem" or root.transforms \
            or not root.origin_desc.startswith(("kernel input", "kernel output")):
        return None
    if not all(t.kind == "index" for t in ref.transforms):
        return None
    root_shape, view_shape = _int_shape(root.shape), _int_shape(ref.shape)
    if root_shape is None or view_shape is None or len(view_shape) != len(root_shape):
        return None  # an integer index drops a dimension: not modelled
    region = view_shape if _whole(index) else _int_shape(index_shape(ref.shape, index))
    if region is None or len(region) != len(root_shape) or _int_shape(value.shape) != region:
        return None  # (a shape mismatch fails earlier, while tracing)
    nested_shape, nested_strides = store_nested(region, contiguous_strides(root_shape))
    try:
        return gmem_transfer_failure(nested_shape, nested_strides, WGMMA, T.itemsize_bits(value.dtype))
    except TilingError:
        return None  # JAX raises otherwise before planning


def _report(interp: Any, message: str, ref: RefVal, span: Span, line: int, data: dict) -> None:
    related = []
    if interp.kernel.lowering == "warpgroup":
        ks = interp.kernel.span
        if ks is None:
            return
        line = ks.line
        related.append(kernel_level_note(ks))
    root = ref.root()
    if root.origin is not None:
        related.append(Related(root.origin, f"{root.aval()} passed here ({root.origin_desc})"))
    interp.report(gmem_transfer_plan.RULE, message, span, line, related=related, data=data)


def _applies(interp: Any) -> bool:
    v = installed()
    return v is not None and v[:2] in PLANNED and interp.kernel.lowering in ("lane", "warpgroup")


def _store(interp: Any, ref: Value, index: Value, value: Value, target: Any, value_node: Any,
           aug: bool) -> None:
    if not (_applies(interp) and isinstance(ref, RefVal) and isinstance(value, ArrayVal) and target is not None):
        return
    message = failure(ref, index, value)
    if message is None:
        return
    data: dict = {}
    if not aug and _whole(index) and isinstance(target, ast.Subscript) and value_node is not None \
            and target.lineno == value_node.end_lineno:  # `ref[...] = value` on one line: the fix
        t, v = interp.span(target.value), interp.span(value_node)
        data = {"stmt_span": Span(t.line, interp.span(target).col, v.end_line, v.end_col),
                "target_span": t, "value_span": v, "plgpu": module_alias(interp, "plgpu")}
    _report(interp, message, ref, interp.span(target), target.lineno - 1, data)


def install() -> None:
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp: Any, ref: Any, index: Value, node: Any) -> Value:
        out = get(interp, ref, index, node)
        if isinstance(ref, RefVal) and ref.kind == "acc" and _whole(index) and isinstance(out, ArrayVal) \
                and out.layout is None:
            return ArrayVal(out.shape, out.dtype, WGMMA_ACC, jax=out.jax)
        return out

    def setitem(interp: Any, ref: Any, index: Value, value: Value, target: Any, value_node: Any,
                aug: bool) -> None:
        put(interp, ref, index, value, target, value_node, aug)
        _store(interp, ref, index, value, target, value_node, aug)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem
    original = MODELS["plgpu.store"]

    def store(call: Call) -> Value:
        out = original(call)
        optimized = call.get(99, "optimized", Const(True))
        if isinstance(optimized, Const) and optimized.value is True and call.node is not None:
            interp = call.interp
            dst, value = call.get(0, "dst"), call.get(1, "value")
            if _applies(interp) and isinstance(dst, RefVal) and isinstance(value, ArrayVal):
                message = failure(dst, Const(Ellipsis), value)
                if message is not None and call.span is not None:
                    _report(interp, message, dst, call.span, call.line, {})
        return out

    MODELS["plgpu.store"] = store


#: When `registry.load_all` installs this module's extensions of other models (lower first):
#: after lane_layouts (30), whose whole tiled loads it reads the layout of.
INSTALL_ORDER = 42

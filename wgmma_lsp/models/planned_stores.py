"""A WGMMA-layout array stored straight to GMEM, or to untransformed SMEM, planned as JAX 0.12
plans it: WG121.

JAX 0.12's Mosaic GPU lowering stores an array in a tiled register layout to a GMEM ref with an
optimized transfer (`FragmentedArray.store_untiled` -> `store_tiled` -> `transfer_tiled`, which
calls `plan_gmem_transfer`, ported in models/transfer_planning.py); where the threads' accesses
would not cover whole 32-byte sectors or 128-byte cache lines it raises
`TransferPlanDerivationError` (an accumulator's value cast to bfloat16 and stored to the kernel's
output: each row's four threads write 16 bytes, half a sector). `ref[...] = value` (swap) and
`plgpu.store(ref, value)` plan it; `plgpu.store(..., optimized=False)` does not. JAX 0.10 plans
no GMEM transfer. Under Lane semantics a store to an SMEM buffer without transforms is planned too
(`plan_tiled_transfer`, swizzle 16): where no staggering of the threads avoids SMEM bank
conflicts, "Failed to synthesize a transfer pattern that avoids bank conflicts" — an
accumulator tile of 64 columns or more stored into an unpadded, untransformed buffer. (A 16-bit
store first tries `stmatrix`, with the same plan: the verdict is the plan's. Warpgroup semantics'
layout inference catches the error and tries other layouts: not claimed.) JAX 0.10 accepts them.

Blame: Lane lowering raises on the store's line; Warpgroup lowering (the MLIR dialect's
lowering, after tracing) raises with no line of the kernel in its traceback: JAX blames the
kernel's launch (a kernel-level error, as models/tma_lowering.py's).

Claimed only where every input is known:
- the value's layout is the WGMMA layout: an accumulator's `acc_ref[...]`, or a whole
  tiled+swizzled SMEM load under Lane semantics (`lane_layouts.WGMMA_LOADED`); cast or not
  (`astype` keeps the layout, as do arithmetic with a Python number or another array of that
  layout, `arrays.KEPT_LAYOUTS`, and a tile-aligned static slice, `tile_aligned`, as
  `FragmentedArray.__getitem__` does); anything else forgets it;
- a floating-point dtype of 8, 16 or 32 bits;
- the ref is a `plgpu.kernel` GMEM operand (a whole array: contiguous) or (Lane) an SMEM buffer
  the kernel allocates without transforms, stored to whole or through views and store indices
  of static slices and integer indices (`o_gmem.at[pl.ds(0, 64)]`, `o_smem[slot]`,
  `o_smem.at[w, slot]`), of known sizes: the allocation's strides for the dimensions they keep
  (`view_strides`);
- JAX 0.12.0.1 or 0.12.1.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.interpret.values import ArrayVal, Const, DSliceVal, RefVal, SliceVal, Value
from wgmma_lsp.models import arrays, refs, store_api  # noqa: F401 - their ref and plgpu.store models are wrapped
from wgmma_lsp.models.transfer_planning import (
    WGMMA, TilingError, contiguous_strides, gmem_transfer_failure, smem_transfer_plan, store_nested,
)
from wgmma_lsp.models.indexing import index_items, index_shape, is_whole, kept_dims
from wgmma_lsp.models.lane_layouts import WGMMA_LOADED
from wgmma_lsp.models.registry import GETITEM, MODELS, SETITEM
from wgmma_lsp.models.user_spelling import module_alias
from wgmma_lsp.rules import transfer_plan
from wgmma_lsp.rules.base import Related, kernel_level_note
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: The layout of an accumulator's value (`acc_ref[...]`): JAX's WGMMA_LAYOUT, in either semantics.
WGMMA_ACC = "wgmma (accumulator)"
WGMMA_LAYOUTS = (WGMMA_ACC, WGMMA_LOADED)
#: The JAX versions whose transfer plans are ported (the same code in 0.12.0.1 and 0.12.1).
PLANNED = "0.12"
_FLOATS = {"bfloat16", "float16", "float32", "float8_e4m3fn", "float8_e5m2"}
#: SMEM buffers the kernel allocates (contiguous, row-major): their `origin_desc`s.
SMEM_ALLOCATIONS = ("run_scoped", "pallas_call scratch", "plgpu.kernel scratch")


def _int_shape(shape: Any) -> tuple[int, ...] | None:
    if shape is None or not all(type(d) is int for d in shape):
        return None
    return tuple(shape)


def _int(v: Value) -> int | None:
    return v.value if isinstance(v, Const) and type(v.value) is int else None


def _slice(item: Value, size: int) -> tuple[int, int] | None:
    """(start, length) of a static unit-step slice of a dimension of `size` (None: not one)."""
    if isinstance(item, SliceVal):
        if not (isinstance(item.step, Const) and item.step.value in (None, 1)):
            return None
        lo = 0 if isinstance(item.start, Const) and item.start.value is None else _int(item.start)
        hi = size if isinstance(item.stop, Const) and item.stop.value is None else _int(item.stop)
        if lo is None or hi is None or not 0 <= lo <= hi <= size:
            return None
        return lo, hi - lo
    if isinstance(item, DSliceVal):
        start, length = _int(item.start), _int(item.size)
        if start is None or length is None or _int(item.stride) != 1 or not 0 <= start <= start + length <= size:
            return None
        return start, length
    return None


def view_strides(ref: RefVal) -> tuple[int, ...] | None:
    """The element strides of a view of a contiguous allocation (`ref.root()`): the root's,
    for the dimensions its indexers keep (None where an indexer is not understood)."""
    root_shape = _int_shape(ref.root().shape)
    if root_shape is None:
        return None
    strides = list(contiguous_strides(root_shape))
    for t in ref.transforms:
        kept = kept_dims(len(strides), t.params[0]) if t.kind == "index" and t.params else None
        if kept is None:
            return None
        strides = [strides[k] for k in kept]
    return tuple(strides)


def failure(interp: Any, ref: RefVal, index: Value, value: ArrayVal) -> str | None:
    """JAX's TransferPlanDerivationError message for storing `value` through `ref[index]`, or
    None (planned, or not decided here)."""
    if value.layout not in WGMMA_LAYOUTS or T.concrete(value.dtype) is None or value.dtype.name not in _FLOATS:
        return None
    root = ref.root()
    if root.kind != "plain" or root.transforms or not all(t.kind == "index" for t in ref.transforms):
        return None
    if root.space == "gmem":
        if not root.origin_desc.startswith(("kernel input", "kernel output")):
            return None
    elif root.space == "smem":  # Lane: Warpgroup's layout inference tries other layouts first
        if interp.kernel.lowering != "lane" or not root.origin_desc.startswith(SMEM_ALLOCATIONS):
            return None
    else:
        return None
    view_shape, strides = _int_shape(ref.shape), view_strides(ref)
    if view_shape is None or strides is None or len(strides) != len(view_shape):
        return None
    if not is_whole(index):
        kept = kept_dims(len(strides), index)
        if kept is None:
            return None
        strides = tuple(strides[k] for k in kept)
    region = view_shape if is_whole(index) else _int_shape(index_shape(ref.shape, index))
    if region is None or len(region) != len(strides) or _int_shape(value.shape) != region:
        return None  # (a shape mismatch fails earlier, while tracing)
    nested_shape, nested_strides = store_nested(region, strides)
    bits = T.itemsize_bits(value.dtype)
    try:
        if root.space == "gmem":
            if strides[-1] != 1:
                return None
            return gmem_transfer_failure(nested_shape, nested_strides, WGMMA, bits)
        if strides[-1] != 1 or any(s % WGMMA.vector_length for s, d in zip(strides[:-1], region[:-1]) if d != 1):
            return None  # transfer_tiled's own UnsupportedTransferError comes first
        plan = smem_transfer_plan(nested_shape, nested_strides, WGMMA, bits, 16)
    except TilingError:
        return None  # JAX raises otherwise before planning
    return plan[1] if plan is not None and plan[0] == "error" else None


def tile_aligned(array: ArrayVal, index: Value) -> bool:
    """Whether `array[index]` (an array in the WGMMA layout, 2-D) is a slice JAX's
    `FragmentedArray.__getitem__` takes: static slices beginning and ending on the layout's
    (64, 8) tiles; the result has the same layout."""
    shape = _int_shape(array.shape)
    items = index_items(index)
    if shape is None or len(shape) != 2 or len(items) != 2:
        return False
    for item, size, tile in zip(items, shape, (64, 8)):
        s = _slice(item, size)
        if s is None or s[0] % tile or s[1] % tile or s[1] == 0:
            return False
    return True


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
        how = "allocated" if root.space == "smem" else "passed"
        related.append(Related(root.origin, f"{root.aval()} {how} here ({root.origin_desc})"))
    interp.report(transfer_plan.RULE, message, span, line, related=related, data=data)


def _applies(interp: Any) -> bool:
    return matches(PLANNED) and interp.kernel.lowering in ("lane", "warpgroup")


def _store(interp: Any, ref: Value, index: Value, value: Value, target: Any, value_node: Any,
           aug: bool) -> None:
    if not (_applies(interp) and isinstance(ref, RefVal) and isinstance(value, ArrayVal) and target is not None):
        return
    message = failure(interp, ref, index, value)
    if message is None:
        return
    data: dict = {}
    if not aug and is_whole(index) and isinstance(target, ast.Subscript) and value_node is not None \
            and target.lineno == value_node.end_lineno:  # `ref[...] = value` on one line: the fix
        t, v = interp.span(target.value), interp.span(value_node)
        data = {"stmt_span": Span(t.line, interp.span(target).col, v.end_line, v.end_col),
                "target_span": t, "value_span": v, "plgpu": module_alias(interp, "plgpu")}
    _report(interp, message, ref, interp.span(target), target.lineno - 1, data)


def _optimized_false(call: Call) -> dict:
    """The fix's data for `plgpu.store(ref, value)`: where `, optimized=False` goes (after the
    last argument; none when `optimized=` is passed already, or `**kwargs`)."""
    node = call.node
    if not isinstance(node, ast.Call) or any(k.arg in ("optimized", None) for k in node.keywords):
        return {}
    last = max([*node.args, *(k.value for k in node.keywords)], key=lambda n: (n.end_lineno, n.end_col_offset),
               default=None)
    if last is None:
        return {}
    end = call.interp.span(last)
    return {"insert_at": Span(end.end_line, end.end_col, end.end_line, end.end_col)}


def install() -> None:
    arrays.KEPT_LAYOUTS.update(WGMMA_LAYOUTS)  # `acc * scale` is still in the WGMMA layout
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp: Any, ref: Any, index: Value, node: Any) -> Value:
        out = get(interp, ref, index, node)
        if isinstance(ref, RefVal) and ref.kind == "acc" and is_whole(index) and isinstance(out, ArrayVal) \
                and out.layout is None:
            return ArrayVal(out.shape, out.dtype, WGMMA_ACC, jax=out.jax)
        return out

    def setitem(interp: Any, ref: Any, index: Value, value: Value, target: Any, value_node: Any,
                aug: bool) -> None:
        put(interp, ref, index, value, target, value_node, aug)
        _store(interp, ref, index, value, target, value_node, aug)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem
    array_get = GETITEM["array"]

    def array_getitem(interp: Any, obj: Any, index: Value, node: Any) -> Value:
        out = array_get(interp, obj, index, node)
        if isinstance(obj, ArrayVal) and obj.layout in WGMMA_LAYOUTS and isinstance(out, ArrayVal) \
                and out.layout is None and tile_aligned(obj, index):
            return ArrayVal(out.shape, out.dtype, obj.layout, jax=out.jax)
        return out

    GETITEM["array"] = array_getitem
    original = MODELS["plgpu.store"]

    def store(call: Call) -> Value:
        out = original(call)
        optimized = call.get(99, "optimized", Const(True))
        if isinstance(optimized, Const) and optimized.value is True and call.node is not None:
            interp = call.interp
            dst, value = call.get(0, "dst"), call.get(1, "value")
            if _applies(interp) and isinstance(dst, RefVal) and isinstance(value, ArrayVal):
                message = failure(interp, dst, Const(Ellipsis), value)
                if message is not None and call.span is not None:
                    _report(interp, message, dst, call.span, call.line, _optimized_false(call))
        return out

    MODELS["plgpu.store"] = store


#: When `registry.load_all` installs this module's extensions of other models (lower first):
#: after lane_layouts (30), whose whole tiled loads it reads the layout of.
INSTALL_ORDER = 42

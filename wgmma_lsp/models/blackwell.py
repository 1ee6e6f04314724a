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
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, RefVal, TupleVal, Value
from wgmma_lsp.models.registry import model
from wgmma_lsp.models.shape_unpacking import unpacking_fails
from wgmma_lsp.rules import (
    memory_space_arguments, mma_barrier_orders_tensor_core, tcgen05_collective_tmem,
    tcgen05_memory_spaces, tcgen05_scales_pair, tcgen05_shapes, tmem_async_access, tmem_narrow_dtype,
    tmem_rows, tmem_transforms,
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
        if T.concrete(dtype) is None:
            return True
        if T.itemsize_bits(dtype) != 32:
            interp.report(tmem_narrow_dtype.RULE, tmem_narrow_dtype.MESSAGE, call.span_of(1, "dtype"),
                          call.line, data={"call_span": call.span})
            return False
        packing = 1
    else:
        p = call.kwargs.get("packed")
        if not (isinstance(p, Const) and isinstance(p.value, bool)) or T.concrete(dtype) is None:
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
    if call.complete and unpacking_fails(
            call, [x.shape if isinstance(x, (RefVal, ArrayVal)) else None for x in (acc, a, b)]):
        return Const(None)
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
    a_scaled, b_scaled = _given(call, "a_scale"), _given(call, "b_scale")
    if a_scaled is None or b_scaled is None:
        return Const(None)
    if a_scaled != b_scaled:
        interp.report(tcgen05_scales_pair.RULE, tcgen05_scales_pair.MESSAGE,
                      call.span_of(99, "a_scale" if a_scaled else "b_scale"), call.line)
        return Const(None)
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
                            bits=T.itemsize_bits(root.dtype) if T.concrete(root.dtype) is not None else None)
            interp.report(tcgen05_memory_spaces.RULE, message, call.span_of(i, ("acc", "a", "b")[i]),
                          call.line, related=related, data=data)
            return Const(None)
    if collective:
        for i, name, what in ((0, "acc", "Accumulator"), (1, "a", "LHS")):
            ref = call.get(i, name)
            if not isinstance(ref, RefVal) or ref.root().kind != "tmem":
                continue  # only TMEM refs carry the flag
            flag = ref.attr("collective")
            if flag is None:
                return Const(None)
            if not flag:
                interp.report(tcgen05_collective_tmem.RULE,
                              f"{what} Ref must be collective if collective_axis is set.",
                              call.span_of(i, name), call.line, related=_allocated(ref))
                return Const(None)
    if not check_mma_barrier(call, call.get(3, "barrier", Const(None)), 3):
        return Const(None)
    if collective:  # (resolved once the MMA's operands are checked: WG117)
        from wgmma_lsp.models.cluster_axes import check_names

        check_names(call, call.kwargs.get("collective_axis", UNKNOWN), "collective_axis")
    if not a_scaled and not collective:
        from wgmma_lsp.models import barrier_index
        from wgmma_lsp.models.tcgen05_lowering import check_mma_lowering

        # The barrier (WG119) is used first under Warpgroup semantics, after the MMA's checks
        # under Lane semantics.
        barrier = call.get(3, "barrier")
        if interp.kernel.lowering == "warpgroup" and barrier_index.check(call, barrier, 3, "barrier"):
            return Const(None)
        check_mma_lowering(call, acc, a, b)
        if interp.kernel.lowering == "lane":
            barrier_index.check(call, barrier, 3, "barrier", last=True)
    return Const(None)


def _allocated(ref: RefVal) -> list:
    from wgmma_lsp.rules.base import Related

    root = ref.root()
    return [Related(root.origin, f"allocated here ({root.origin_desc})")] if root.origin is not None else []


def check_mma_barrier(call: Call, barrier: Value, i: int) -> bool:
    """`orders_tensor_core` of the barrier an MMA (or commit) arrives on; False if JAX raises."""
    if not isinstance(barrier, RefVal) or barrier.root().kind != "barrier":
        return True
    if barrier.attr("orders_tensor_core") is False:
        call.interp.report(mma_barrier_orders_tensor_core.RULE, mma_barrier_orders_tensor_core.MESSAGE,
                           call.span_of(i, "barrier"), call.line, related=_allocated(barrier))
        return False
    return True


@model("plgpu.tcgen05_commit_arrive")
def _tcgen05_commit_arrive(call: Call) -> Value:
    if check_mma_barrier(call, call.get(0, "barrier"), 0):
        from wgmma_lsp.models import barrier_index

        barrier_index.check(call, call.get(0, "barrier"), 0, "barrier")
    return Const(None)


def _tmem_only(call: Call, name: str, message: str) -> bool:
    """`ref.memory_space != TMEM` raises; True when the ref is proven to be TMEM."""
    ref = call.get(0, name)
    if not isinstance(ref, RefVal):
        return False
    space = ref.root().space
    if space == "tmem":
        return True
    if space in ("smem", "gmem", "default", "any", "regs") and ref.root().kind != "acc":
        call.interp.report(tmem_async_access.RULE, message, call.span_of(0, name), call.line,
                           related=_allocated(ref))
    return False


@model("plgpu.async_load_tmem")
def _async_load_tmem(call: Call) -> Value:
    if not _tmem_only(call, "src", "Async load only supports TMEM refs"):
        return UNKNOWN
    ref = call.get(0, "src")
    assert isinstance(ref, RefVal)
    _transposed_view(call, ref, "src")
    return ArrayVal(ref.shape, ref.dtype)  # `_get_abstract_eval` of the (viewed) ref


def _transposed_view(call: Call, ref: RefVal, name: str) -> bool:
    """WG120: the lowering of a TMEM load or store handles a view's indexing, not its transpose:
    JAX 0.10.2 and 0.12.0.1 are left with the transpose ('Unimplemented transforms for TMEM
    refs. ...'), 0.12.1's `_handle_transforms` refuses it ('TMEM transpose not allowed.'), on the
    operation's line under either semantics. Claimed for views made of indexing and one
    transpose of known permutation."""
    from wgmma_lsp.interpret.jax_version import installed
    from wgmma_lsp.rules import tmem_transposed_view

    if call.interp.kernel.lowering not in ("lane", "warpgroup") or installed() is None \
            or installed()[:2] not in ((0, 10), (0, 12)) or ref.root().kind != "tmem":
        return False
    views = ref.transforms[len(ref.root().transforms):]
    transposes = [t for t in views if t.kind == "transpose"]
    if len(transposes) != 1 or transposes[0].params is None \
            or any(t.kind not in ("index", "transpose") for t in views):
        return False
    call.interp.report(tmem_transposed_view.RULE, tmem_transposed_view.message(tuple(transposes[0].params)),
                       call.span_of(0, name), call.line, related=_allocated(ref))
    return True


@model("plgpu.async_copy_smem_to_tmem")
def _async_copy_smem_to_tmem(call: Call) -> Value:
    """`async_copy_smem_to_tmem(smem_ref, tmem_ref)`: `_async_copy_smem_to_tmem_abstract_eval`
    compares the two refs' dtypes, then their shapes (JAX 0.10 and 0.12; an allocation's tiling
    and swizzle leave its shape as it is). Refs viewed by indexing only, with known avals."""
    smem, tmem = call.get(0, "smem_ref"), call.get(1, "tmem_ref")
    if not (isinstance(smem, RefVal) and isinstance(tmem, RefVal) and call.complete):
        return Const(None)
    if smem.root().space != "smem" or tmem.root().kind != "tmem" \
            or not _indexed_only(smem) or not _indexed_only(tmem):
        return Const(None)
    if T.concrete(smem.dtype) is None or T.concrete(tmem.dtype) is None:
        return Const(None)
    if smem.dtype.name != tmem.dtype.name:  # type: ignore[union-attr]
        message = (f"Expected SMEM element type ({smem.dtype.name}) to equal the TMEM element type "  # type: ignore[union-attr]
                   f"({tmem.dtype.name})")  # type: ignore[union-attr]
    elif smem.shape is not None and tmem.shape is not None \
            and all(isinstance(d, int) for d in (*smem.shape, *tmem.shape)) \
            and tuple(smem.shape) != tuple(tmem.shape):
        message = (f"Expected SMEM reference shape {tuple(smem.shape)} to equal the TMEM reference "
                   f"shape {tuple(tmem.shape)}")
    else:
        return Const(None)
    from wgmma_lsp.rules import tmem_copy_operands

    call.interp.report(tmem_copy_operands.RULE, message, call.span, call.line,
                       related=_allocated(smem) + _allocated(tmem))
    return UNKNOWN  # JAX raises here


def _indexed_only(ref: RefVal) -> bool:
    """A ref seen through `.at[...]` views at most (its allocation's own transforms aside)."""
    own = len(ref.root().transforms)
    return all(t.kind == "index" for t in ref.transforms[own:])


@model("plgpu.async_store_tmem")
def _async_store_tmem(call: Call) -> Value:
    """`async_store_tmem(ref, value)`: a TMEM ref, then `_swap_abstract_eval`'s checks of the value
    against the ref (WG056/WG057, as for `ref[...] = value`), for a ref not viewed."""
    if not _tmem_only(call, "ref", "Async store only supports TMEM refs"):
        return Const(None)
    ref, node = call.get(0, "ref"), call.node
    if isinstance(ref, RefVal) and _transposed_view(call, ref, "ref"):
        return Const(None)
    if isinstance(ref, RefVal) and ref.kind == "tmem" and ref.base is None and not ref.transforms \
            and node is not None and call.complete:
        from wgmma_lsp.models.stores import check_swap

        ref_node = call.node_of(0, "ref")
        check_swap(call.interp, ref, Const(Ellipsis), call.get(1, "value"), call.node_of(1, "value"),
                   call.line, ref_node if ref_node is not None else node, node, kind="tmem")
    return Const(None)

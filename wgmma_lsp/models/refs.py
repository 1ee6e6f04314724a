"""Pallas refs: loads (`ref[idx]`), views (`ref.at[idx]`, `plgpu.transpose_ref`), attributes.

Mirrors `jax._src.state.types` (AbstractRef, TransformedRef) and the Mosaic GPU ref
transforms in `jax._src.pallas.mosaic_gpu.core`.
"""

from __future__ import annotations

from dataclasses import replace

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN, ArrayVal, Const, DTypeVal, RefVal, TransformVal, TupleVal, Value, Wrapped, dim_value,
)
from wgmma_lsp.models.indexing import index_shape
from wgmma_lsp.models.registry import ATTRIBUTES, GETITEM, SETITEM, method, model
from wgmma_lsp.models.stores import check_indexing, check_store
from wgmma_lsp.models.tiled_indexing import check_tiled_indexing


def ref_view(ref: RefVal, index: Value, desc: str) -> RefVal:
    """`ref.at[index]`: a view with the indexed shape; JAX keeps the base ref's aval for messages."""
    shape = index_shape(ref.shape, index)
    # The index is kept (params) for the lowering's checks of views of tiled refs.
    return RefVal(ArrayVal(shape, ref.dtype), ref.space, ref.kind, ref.transforms + (TransformVal("index", (index,)),),
                  base=ref.root() if ref.base is None else ref.base, origin=ref.origin,
                  origin_desc=ref.origin_desc)


ATTRIBUTES["ref.shape"] = lambda r: TupleVal(tuple(dim_value(d) for d in r.shape)) if r.shape is not None else UNKNOWN
ATTRIBUTES["ref.dtype"] = lambda r: DTypeVal(r.dtype, instance=True) if r.dtype is not None else UNKNOWN
ATTRIBUTES["ref.ndim"] = lambda r: Const(len(r.shape)) if r.shape is not None else UNKNOWN
ATTRIBUTES["ref.at"] = lambda r: Wrapped("ref.at", r, {})


def _at_getitem(interp, obj: Wrapped, index: Value, node) -> Value:
    ref = obj.func
    assert isinstance(ref, RefVal)
    if not check_indexing(interp, ref, index, node):
        return UNKNOWN  # JAX raises here
    return ref_view(ref, index, "at[...]")


GETITEM["wrapped:ref.at"] = _at_getitem


def ref_getitem(interp, ref: RefVal, index: Value, node) -> Value:
    """Loading through a ref: the inner array, indexed (accumulators load their value first)."""
    if ref.kind in ("barrier",):
        return UNKNOWN
    if ref.kind == "tmem":
        if node is not None:
            _tmem_plain_access(interp, node, load=True)
        return UNKNOWN
    if not check_indexing(interp, ref, index, node):
        return UNKNOWN  # JAX raises here
    if node is not None:
        check_tiled_indexing(interp, ref, index, node)
    return ArrayVal(index_shape(ref.shape, index), ref.dtype)


GETITEM["ref"] = ref_getitem


def plain_setitem(interp, ref: RefVal, index, value, target, value_node, aug) -> None:
    """`ref[idx] = value`: accumulators have their own store; plain refs go through `swap`."""
    if ref.kind == "acc":
        from wgmma_lsp.models.wgmma import accumulator_setitem

        accumulator_setitem(interp, ref, index, value, target, value_node, aug)
    elif ref.kind == "plain" and check_indexing(interp, ref, index, target):
        check_store(interp, ref, index, value, target, value_node)
        check_tiled_indexing(interp, ref, index, target)
    elif ref.kind == "tmem":
        _tmem_plain_access(interp, target, load=False)


def _tmem_plain_access(interp, node, load: bool) -> None:
    """Lane lowering of `tmem_ref[...]` / `tmem_ref[...] = v` (pallas/mosaic_gpu/lowering.py:
    `_get_lowering_rule` / `_swap_lowering_rule`): TMEM is accessed asynchronously only."""
    from wgmma_lsp.interpret.jax_version import installed
    from wgmma_lsp.rules import tmem_plain_access

    # 0.12's Lane lowering raises the same (docs/coverage.md, rows 55-56); its Warpgroup lowering
    # fails in layout inference instead, with no line of the kernel.
    if interp.kernel.lowering != "lane" or installed() is None or installed()[:2] not in ((0, 10), (0, 12)):
        return
    message = ("Loads from TMEM are asynchronous operations and cannot be performed using the usual "
               "syntax. Please use plgpu.async_load_tmem instead.") if load else (
               "Stores to TMEM are asynchronous operations and cannot be performed using the usual "
               "syntax. Please use plgpu.async_store_tmem instead.")
    interp.report(tmem_plain_access.RULE, message, interp.span(node), node.lineno - 1)


SETITEM["ref"] = plain_setitem


@model("plgpu.transpose_ref")
def _transpose_ref(call: Call) -> Value:
    """`transpose_ref(ref, permutation)` (mosaic_gpu/core.py): `assert hasattr(ref,
    "memory_space")`, then `ref.transpose(permutation)`. From JAX 0.12 a traced ref's
    `.memory_space` raises (jax/_src/core.py, Tracer.memory_space), so a kernel ref that is not
    already a view fails there (WG092)."""
    from wgmma_lsp.interpret.jax_source import tracer_memory_space_raises
    from wgmma_lsp.rules import transpose_ref_traced

    ref = call.get(0, "ref")
    perm = call.get(1, "permutation")
    if not isinstance(ref, RefVal):
        return UNKNOWN
    if ref.base is None and not ref.transforms and tracer_memory_space_raises():
        # JAX 0.12: `hasattr(ref, "memory_space")` on a traced kernel ref raises first
        known = ref.inner.shape is not None and ref.inner.dtype is not None and not ref.inner.dtype.symbolic
        # JAX prints the aval: a WGMMA accumulator's is `Ref<regs>{float32[128,128]}` (catalog row 31)
        aval = ref.aval() if ref.kind in ("plain", "tmem") and ref.space in ("smem", "tmem") else \
            f"Ref<regs>{{{ref.inner.aval()}}}" if ref.kind == "acc" else None
        if known and aval is not None:
            call.interp.report(
                transpose_ref_traced.RULE,
                f"The 'memory_space' attribute is not available on traced array with shape {aval}. "
                "Use `jax.typeof(x).memory_space` instead.",
                call.span, call.line,
                # No `ref.transpose(perm)` fix for an accumulator: its lowering rejects any transpose.
                data={} if ref.kind == "acc" else {"call_span": call.span, "ref_span": call.span_of(0, "ref"),
                                                    "perm_span": call.span_of(1, "permutation")})
        return UNKNOWN  # raised here (other refs: an aval spelling not modelled)
    if ref.root().space == "tmem":
        from wgmma_lsp.rules import tmem_transpose

        call.interp.report(tmem_transpose.RULE, tmem_transpose.MESSAGE, call.span_of(0, "ref"), call.line)
        return UNKNOWN  # JAX raises here
    if _wrong_rank(call, ref, perm):
        return UNKNOWN  # JAX raises here
    return transpose_view(ref, perm)


@method("ref.transpose")
def _ref_transpose(ref: RefVal, call: Call) -> Value:
    """`ref.transpose(perm)` / `ref.transpose(*perm)` (state/types.py: AbstractRef.transpose)."""
    perm = call.get(0) if len(call.args) == 1 else TupleVal(tuple(call.args))
    if _wrong_rank(call, ref, perm):
        return UNKNOWN  # JAX raises here
    return transpose_view(ref, perm)


def _wrong_rank(call: Call, ref: RefVal, perm: Value) -> bool:
    """WG096: a permutation of known length that is not the rank of a ref of known shape
    (state/types.py, TransposeTransform.transform_type)."""
    from wgmma_lsp.rules import transpose_rank

    shape = ref.shape
    if shape is None or not isinstance(perm, TupleVal):
        return False
    p = [x.value if isinstance(x, Const) else None for x in perm.items]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in p) or len(p) == len(shape):
        return False
    call.interp.report(transpose_rank.RULE, transpose_rank.message(tuple(p), len(shape)),  # type: ignore[arg-type]
                       call.span, call.line)
    return True


def transpose_view(ref: RefVal, perm: Value) -> Value:
    """The view of `ref` through a transpose by `perm`."""
    shape = ref.shape
    if shape is not None and isinstance(perm, TupleVal):
        p = [x.value if isinstance(x, Const) else None for x in perm.items]
        if all(isinstance(i, int) for i in p) and sorted(p) == list(range(len(shape))):  # type: ignore[type-var]
            return replace(ref, inner=ArrayVal(tuple(shape[i] for i in p), ref.dtype),  # type: ignore[index]
                           transforms=ref.transforms + (TransformVal("transpose", tuple(p)),), base=ref.root())
    return replace(ref, inner=ArrayVal(None, ref.dtype), transforms=ref.transforms + (TransformVal("transpose"),),
                   base=ref.root())


def _load_from(call: Call, idx: Value) -> Value:
    ref = call.get(0)
    if isinstance(ref, RefVal) and ref.kind == "plain":
        return ArrayVal(index_shape(ref.shape, idx), ref.dtype)
    return UNKNOWN


@model("pl.load")
def _pl_load(call: Call) -> Value:
    return _load_from(call, call.get(1, "idx"))


@model("plgpu.load")
def _plgpu_load(call: Call) -> Value:
    """`plgpu.load(src, idx, *, layout, optimized)` in JAX 0.10; `plgpu.load(src, *, layout,
    optimized)` from 0.12 (the whole ref, or a view: `ref.at[idx]`)."""
    from wgmma_lsp.interpret.jax_source import signature

    sig = signature("plgpu.load")
    if sig is not None and "idx" not in {p.name for p in sig.params}:
        return _load_from(call, TupleVal(()))
    return _load_from(call, call.get(1, "idx"))


def _reshape_shape(ref: RefVal, call: Call) -> tuple | None:
    """The shape `ref.reshape(*shape)` asks for (`-1` resolved when the rest is known)."""
    from wgmma_lsp.interpret.values import as_shape

    args = call.args
    shape = as_shape(args[0]) if len(args) == 1 else as_shape(TupleVal(tuple(args)))
    if shape is None or not call.complete:
        return None
    if shape.count(-1) == 1 and ref.shape is not None and all(isinstance(d, int) for d in ref.shape) \
            and all(isinstance(d, int) for d in shape):
        total = 1
        for d in ref.shape:
            total *= d  # type: ignore[operator]
        rest = 1
        for d in shape:
            if d != -1:
                rest *= d  # type: ignore[operator]
        shape = tuple(total // rest if d == -1 else d for d in shape) if rest else None
    return shape


def _ref_reshape(ref: Value, call: Call) -> Value:
    """`ref.reshape(*shape)` (jax/_src/state/types.py: TransformedRef.reshape): a view of the same
    buffer with a ReshapeTransform; the aval JAX prints for messages stays the base ref's."""
    if not isinstance(ref, RefVal):
        return UNKNOWN
    shape = _reshape_shape(ref, call)
    return RefVal(ArrayVal(shape, ref.dtype), ref.space, ref.kind,
                  ref.transforms + (TransformVal("reshape", tuple(shape) if shape else ()),),
                  base=ref.root(), origin=ref.origin, origin_desc=ref.origin_desc)


def _ref_T(ref: RefVal) -> Value:
    """`ref.T`: the reversed permutation (state/types.py: TransformedRef.T)."""
    if ref.shape is None:
        return UNKNOWN
    return transpose_view(ref, TupleVal(tuple(Const(i) for i in reversed(range(len(ref.shape))))))


method("ref.reshape")(_ref_reshape)
ATTRIBUTES["ref.T"] = _ref_T

"""Indexing refs and storing into them: what JAX checks before any kernel-specific rule.

Mirrors (jax 0.10.2), in JAX's order:
- `jax._src.state.indexing.NDIndexer.from_indices_shape` (one ellipsis at most, no more indices
  than dimensions) and `NDIndexer.__post_init__` (static slices inside the dimension), run by
  `ref[idx]`, `ref[idx] = v` and `ref.at[idx]`;
- `jax._src.state.primitives._swap_abstract_eval` for `ref[idx] = v`: a Ref is not a value, then
  the shape, then the dtype — after `_maybe_implicit_cast`, which converts weak floats to a
  floating ref's dtype and any integer value to an integer ref's dtype.
Only plain refs are checked here (accumulators, TMEM and barriers have their own paths).
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.values import (
    ArrayVal, Const, DSliceVal, RefVal, SliceVal, TupleVal, Value, as_int,
)
from wgmma_lsp.models.indexing import index_items, index_shape
from wgmma_lsp.models.user_spelling import jnp_alias
from wgmma_lsp.rules import (
    index_multiple_ellipsis, index_out_of_bounds, index_too_many, store_dtype, store_ref_value,
    store_shape,
)

_FULL = SliceVal(Const(None), Const(None), Const(None))


def _expanded(items: list[Value], ndim: int) -> list[Value]:
    """`indices[ip:ip+1] = [slice(None)] * (len(shape) - len(indices) + 1)` for the one ellipsis."""
    for ip, i in enumerate(items):
        if isinstance(i, Const) and i.value is Ellipsis:
            return items[:ip] + [_FULL] * max(0, ndim - len(items) + 1) + items[ip + 1:]
    return items


def _py_repr(v: Value) -> str | None:
    """Python's repr of a static index item, as `indices={indices}` prints it."""
    if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return repr(v.value)
    if isinstance(v, SliceVal):
        parts = [p.value if isinstance(p, Const) else ... for p in (v.start, v.stop, v.step)]
        if all(p is None or isinstance(p, int) and not isinstance(p, bool) for p in parts):
            return repr(slice(*parts))
    return None


def _static_slice(v: Value, d: int) -> tuple[int, int, int] | None:
    """(start, size, stride) of a static slice item along a dimension of size d, as `Slice`."""
    if isinstance(v, SliceVal):
        parts = [p.value if isinstance(p, Const) else ... for p in (v.start, v.stop, v.step)]
        if not all(p is None or isinstance(p, int) and not isinstance(p, bool) for p in parts):
            return None
        if parts[2] is not None and parts[2] < 1:
            return None
        r = range(d)[slice(*parts)]
        return (r.start, len(r), r.step)
    if isinstance(v, DSliceVal):
        start, size, stride = as_int(v.start), as_int(v.size), as_int(v.stride)
        if start is None or size is None or stride is None:
            return None
        return (start, size, stride)
    return None


def _starts_at_zero(i: Value) -> bool:
    start = i.start if isinstance(i, (SliceVal, DSliceVal)) else None
    if isinstance(i, SliceVal) and not (isinstance(i.step, Const) and i.step.value in (None, 1)):
        return False
    return isinstance(start, Const) and (start.value == 0 and not isinstance(start.value, bool)
                                         or start.value is None and isinstance(i, SliceVal))


def check_indexing(interp, ref: RefVal, index: Value, node: ast.AST | None) -> bool:
    """True when indexing passes (or cannot be decided); False when JAX raises (reported when
    the message is known)."""
    if node is None or ref.kind != "plain" or ref.shape is None:
        return True
    if isinstance(index, TupleVal) and index.is_list:
        return True
    items = index_items(index)
    shape = ref.shape
    span, line = interp.span(node), getattr(node, "lineno", 0) - 1
    if sum(1 for i in items if isinstance(i, Const) and i.value is Ellipsis) > 1:
        interp.report(index_multiple_ellipsis.RULE, index_multiple_ellipsis.MESSAGE, span, line)
        return False
    expanded = _expanded(items, len(shape))
    if len(expanded) > len(shape):
        texts = [_py_repr(i) for i in expanded]
        if all(t is not None for t in texts) and D.is_known(shape):
            indices = f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"  # type: ignore[arg-type]
            interp.report(index_too_many.RULE,
                          f"`indices` must not be longer than `shape`: indices={indices}, "
                          f"shape={D.format_shape(shape)}", span, line)
        return False
    for i, d in zip(expanded, shape):
        if not isinstance(i, (SliceVal, DSliceVal)):
            if isinstance(i, Const) or (isinstance(i, ArrayVal) and i.shape == ()):
                continue  # integer indexers: converted to arrays, not checked statically
            return True  # fancy or unknown indexing: other paths
        if _starts_at_zero(i):
            continue  # `if value := start` is false for 0: nothing is checked
        s = _static_slice(i, d) if isinstance(d, int) else None
        if s is None:
            return True  # undecided: a later dimension's error may not be the one JAX raises
        start, size, stride = s
        if start and start >= d:
            interp.report(index_out_of_bounds.RULE, f"Out of bound slice: start={start}, dim={d}.",
                          span, line)
            return False
        if start and size and start + (size - 1) * stride >= d:
            interp.report(index_out_of_bounds.RULE,
                          f"Out of bound slice: start={start}, size={size}, stride={stride}, dim={d}.",
                          span, line)
            return False
    return True


def _indexer_repr(index: Value, shape: tuple[int, ...]) -> str | None:
    """The NDIndexer JAX prints in `Transforms: (...)` for a store through a plain ref. A bare
    `ref[...]` (or `ref[()]`) adds no indexer (state/primitives.py `get_ref_and_transforms`:
    an empty index keeps the ref's own transforms, none here): JAX prints `()`."""
    if _bare(index):
        return "()"
    items = _expanded(index_items(index), len(shape))
    items += [_FULL] * (len(shape) - len(items))
    parts = []
    for i, d in zip(items, shape):
        if isinstance(i, Const) and isinstance(i.value, int) and not isinstance(i.value, bool):
            parts.append("ShapedArray(int32[], weak_type=True)")
            continue
        if isinstance(i, ArrayVal) and i.shape == () and T.concrete(i.dtype) is not None \
                and T.is_integer(i.dtype) and i.dtype.name == "int32":  # type: ignore[union-attr]
            parts.append("ShapedArray(int32[], weak_type=True)" if i.dtype.weak  # type: ignore[union-attr]
                         else "ShapedArray(int32[])")  # a traced index (`lax.axis_index`)
            continue
        s = _static_slice(i, d)
        if s is None:
            return None
        parts.append(f"Slice(start={s[0]}, size={s[1]}, stride={s[2]})")
    indices = f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    return (f"(NDIndexer(indices={indices}, shape={D.format_shape(shape)}, int_indexer_shape=(), "
            "validate=False),)")


def _tiled_allocation(ref: RefVal) -> tuple[tuple[int, ...], list[str]] | None:
    """A store straight into an SMEM allocation made with `transforms=(TilingTransform(t),)` or
    `(TilingTransform(t), SwizzleTransform(s))`: the shape its ref has in the kernel (tiled:
    `(..., d0 // t0, d1 // t1, t0, t1)`) and the transforms that undo them, as JAX prints them
    (the swizzle's first). None for any other ref or a tiling that does not divide the shape."""
    ts = ref.transforms
    if ref.base is not None or ref.shape is None or not ts or ts[0].kind != "tiling" \
            or len(ts) > 2 or (len(ts) == 2 and ts[1].kind != "swizzle"):
        return None
    tiling = tuple(ts[0].params)
    shape = ref.shape
    if not tiling or len(tiling) > len(shape) or not all(isinstance(t, int) and t > 0 for t in tiling) \
            or not all(isinstance(d, int) for d in shape):
        return None
    tail = shape[len(shape) - len(tiling):]
    if any(d % t for d, t in zip(tail, tiling)):  # type: ignore[operator]
        return None
    tiled = (*shape[:len(shape) - len(tiling)], *(d // t for d, t in zip(tail, tiling)), *tiling)  # type: ignore[operator]
    undo = [f"UntilingTransform(tiling={D.format_shape(tiling)})"]
    if len(ts) == 2:
        if len(ts[1].params) != 1 or not isinstance(ts[1].params[0], int):
            return None
        undo.insert(0, f"UnswizzleRef(swizzle={ts[1].params[0]})")
    return tiled, undo  # type: ignore[return-value]


def _report_tiled_store(interp, ref: RefVal, index: Value, value: ArrayVal, expected, span, line: int,
                        view: list[str] | None = None) -> None:
    """JAX's `swap` message for a store into a tiled (and swizzled) allocation: the ref's shape is
    the tiled one, its transforms the untiling and unswizzling, then `view`'s (a transpose the
    store goes through), then the store's indexer."""
    tiled = _tiled_allocation(ref)
    if tiled is None or expected is None or not all(isinstance(d, int) for d in (*expected, *value.shape)):
        return
    indexer = _indexer_repr(index, ref.shape)  # type: ignore[arg-type]
    if indexer is None:
        return
    parts = tiled[1] + (view or []) + ([indexer[1:-2]] if indexer != "()" else [])
    listed = ", ".join(parts) + ("," if len(parts) == 1 else "")  # (a tuple's repr)
    interp.report(store_shape.RULE,
                  f"Invalid shape for `swap`. Ref shape: {D.format_shape(tiled[0])}. "
                  f"Expected shape: {D.format_shape(expected)}. "
                  f"Value shape: {D.format_shape(value.shape)}. Transforms: ({listed}). ",
                  span, line)


def _transposed_allocation(ref: RefVal) -> tuple[int, ...] | None:
    """The permutation of `alloc.T` (or `alloc.transpose(p)`) when `ref` is an SMEM allocation
    seen through one transpose and nothing else; None for any other ref."""
    base = ref.base
    if base is None or base.base is not None or ref.space != "smem" or ref.attr("pipeline_slot") is True \
            or len(ref.transforms) != len(base.transforms) + 1 or ref.transforms[:-1] != base.transforms:
        return None
    last = ref.transforms[-1]
    if last.kind != "transpose" or not last.params or not all(isinstance(p, int) for p in last.params):
        return None
    return tuple(last.params)


def _untransformed_aval(ref: RefVal | None) -> bool:
    """JAX 0.12.1: an SMEM allocation whose transforms are a tiling and/or a swizzle. Its ref in
    the kernel has the allocation's own shape and no transforms (mosaic_gpu/core.py
    `GPUMemoryRef.get_ref_aval`: they are kept apart, `get_ref_transforms`, for the lowering), so
    `swap` names it as it names a plain allocation."""
    from wgmma_lsp.interpret.jax_version import matches

    if ref is None or ref.base is not None or not ref.transforms or ref.space != "smem" \
            or ref.attr("pipeline_slot") is True or not matches(">=0.12.1"):
        return False
    if not ref.origin_desc.startswith(("run_scoped", "pallas_call scratch", "plgpu.kernel scratch")):
        return False
    return all(t.kind in ("tiling", "swizzle") for t in ref.transforms)


def _report_layout_allocation_store(interp, ref: RefVal, index: Value, value: ArrayVal, expected, span,
                                    line: int) -> None:
    """JAX 0.12.1's `swap` message for a store into such an allocation (`_untransformed_aval`),
    directly or through one transpose of it with `[...]` (`alloc.T[...] = v`)."""
    if (perm := _transposed_allocation(ref)) is not None:
        if not _bare(index):
            return  # the transpose's and the indexer's order in JAX's repr: not modelled
        shape, transforms = ref.base.shape, f"(TransposeTransform(permutation={D.format_shape(perm)}),)"  # type: ignore[union-attr]
    elif ref.base is None:
        shape = ref.shape
        transforms = _indexer_repr(index, shape) if shape is not None and all(  # type: ignore[assignment]
            isinstance(d, int) for d in shape) else None
    else:
        return
    if transforms is None or shape is None or expected is None \
            or not all(isinstance(d, int) for d in (*shape, *expected, *value.shape)):
        return
    interp.report(store_shape.RULE,
                  f"Invalid shape for `swap`. Ref shape: {D.format_shape(shape)}. "
                  f"Expected shape: {D.format_shape(expected)}. "
                  f"Value shape: {D.format_shape(value.shape)}. Transforms: {transforms}. ",
                  span, line)


def _bare(index: Value) -> bool:
    """`[...]` or `[()]`: the whole ref, no indexer in JAX's transforms."""
    return (isinstance(index, Const) and index.value is Ellipsis) or (isinstance(index, TupleVal) and not index.items)


def _pipeline_slots(ref: RefVal) -> int | None:
    for name, _ in ref.root().attrs:
        if name.startswith("pipeline_slots="):
            return int(name.split("=", 1)[1])
    return None


def _report_pipeline_block(interp, ref: RefVal, index: Value, value: ArrayVal, expected, slots: int | None,
                           span, line: int) -> None:
    """A store into a pipeline body's block: the body gets `smem_ref.at[slot]`, so JAX's `swap`
    names the whole `(slots, *block)` buffer and an indexer that starts with the slot (an int32
    scalar: weakly typed in jax 0.10, not in 0.12). A block with a tiling (and a swizzle): before
    jax 0.12.1, the tiled buffer and the transforms undoing them (`_tiled_allocation`)."""
    from wgmma_lsp.interpret.jax_version import matches

    shape = ref.shape
    if slots is None or shape is None or expected is None \
            or not all(isinstance(d, int) for d in (*shape, *expected, *value.shape)):  # type: ignore[union-attr]
        return
    if not _bare(index):
        return  # a further indexer would merge into the slot's: not modelled
    full = (slots, *shape)
    slot = "ShapedArray(int32[])" if matches(">=0.12") else "ShapedArray(int32[], weak_type=True)"
    dims = ", ".join(f"Slice(start=0, size={d}, stride=1)" for d in shape)
    indexer = (f"NDIndexer(indices=({slot}, {dims}), shape={D.format_shape(full)}, "
               "int_indexer_shape=(), validate=False)")
    transforms = f"({indexer},)"
    shown = full
    if ref.transforms and not matches(">=0.12.1"):
        # A block with a tiling (and swizzle): before 0.12.1 its ref is the tiled buffer, and
        # the transforms that undo them come first (0.12.1 keeps them out of the aval).
        tiled = _tiled_allocation(ref)
        if tiled is None:
            return
        shown = (slots, *tiled[0])
        transforms = f"({', '.join(tiled[1])}, {indexer})"
    interp.report(store_shape.RULE,
                  f"Invalid shape for `swap`. Ref shape: {D.format_shape(shown)}. "
                  f"Expected shape: {D.format_shape(expected)}. "
                  f"Value shape: {D.format_shape(value.shape)}. Transforms: {transforms}. ",
                  span, line)


def _implicitly_cast(ref_dtype: T.DType, val_dtype: T.DType) -> bool:
    """`_maybe_implicit_cast`: weak floats into floating refs, any integer into integer refs."""
    return (val_dtype.weak and T.is_floating(ref_dtype) and T.is_floating(val_dtype)) or \
        (T.is_integer(ref_dtype) and T.is_integer(val_dtype))


def check_store(interp, ref: RefVal, index: Value, value: Value, target: ast.Subscript,
                value_node: ast.AST | None) -> None:
    """`ref[idx] = value` through a plain ref (after the indexing checks passed)."""
    check_swap(interp, ref, index, value, value_node, target.lineno - 1, target.value, target)


def check_swap(interp, ref: RefVal, index: Value, value: Value, value_node: ast.AST | None,
               line: int, ref_node: ast.AST, site: ast.AST, kind: str = "plain") -> None:
    """`swap`'s checks of a store of `value` through a plain ref at `index`: reported at the value
    (else at `site`, the store), blamed on 0-based `line`; `ref_node` spells the ref (fixes).
    `kind`: the kind of ref the store goes through (`"tmem"`: `plgpu.async_store_tmem`, whose
    abstract evaluation is `swap`'s)."""
    if ref.kind != kind:
        return
    span = interp.span(value_node) if value_node is not None else interp.span(site)
    if isinstance(value, RefVal):
        interp.report(store_ref_value.RULE, store_ref_value.MESSAGE, span, line,
                      data={"value_span": span})
        return
    if not isinstance(value, ArrayVal) or value.shape is None:
        return
    expected = index_shape(ref.shape, index)
    eq = D.shapes_equal(expected, value.shape)
    if eq is False:
        shape = ref.shape
        direct = ref.base is None and not ref.transforms
        slots = _pipeline_slots(ref)
        if ref.base is None and ref.attr("pipeline_slot") is True \
                and (direct or _tiled_allocation(ref) is not None):
            _report_pipeline_block(interp, ref, index, value, expected, slots, span, line)
            return
        if _untransformed_aval(ref) or _untransformed_aval(ref.base):
            _report_layout_allocation_store(interp, ref, index, value, expected, span, line)
            return
        if ref.base is None and ref.transforms and ref.attr("pipeline_slot") is not True \
                and ref.space == "smem":
            _report_tiled_store(interp, ref, index, value, expected, span, line)
            return
        if (perm := _transposed_allocation(ref)) is not None and _bare(index):
            # `acc_smem.T[...] = v`: the allocation's transforms, then the transpose
            _report_tiled_store(interp, ref.base, index, value, expected, span, line,  # type: ignore[arg-type]
                                view=[f"TransposeTransform(permutation={D.format_shape(perm)})"])
            return
        if direct and shape is not None and expected is not None and all(
                isinstance(d, int) for d in (*shape, *expected, *value.shape)):
            transforms = _indexer_repr(index, shape)  # type: ignore[arg-type]
            if transforms is not None:
                interp.report(store_shape.RULE,
                              f"Invalid shape for `swap`. Ref shape: {D.format_shape(shape)}. "
                              f"Expected shape: {D.format_shape(expected)}. "
                              f"Value shape: {D.format_shape(value.shape)}. Transforms: {transforms}. ",
                              span, line)
        return
    same = T.same(ref.dtype, value.dtype)  # None: unknown, or a symbolic dtype against another
    if eq is not True or same is None:
        return
    # (a peer's view, `plgpu.remote_ref`, keeps the dtype: PeerMemRef.transform_type is the identity)
    if any(t.kind not in ("index", "tiling", "swizzle", "transpose", "peer") for t in ref.transforms):
        return
    if same or _implicitly_cast(ref.dtype, value.dtype):  # type: ignore[arg-type]
        return
    interp.report(store_dtype.RULE,
                  f"Invalid dtype for `swap`. Ref dtype: {ref.dtype.name}. Value dtype: {value.dtype.name}. ",
                  span, line, data={"value_span": span, "ref_dtype": ref.dtype.name,
                                    "value_dtype": value.dtype.name,
                                    "ref_span": interp.span(ref_node), "jnp": jnp_alias(interp)})


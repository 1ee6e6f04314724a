"""Slicing a tiled SMEM ref, as the Mosaic GPU lowering commutes the slices past the tiling.

Mirrors `UntilingTransform.commute_ndindexer` (jax/_src/pallas/mosaic_gpu/core.py, jax 0.10.2),
which runs when a load or store through a tiled ref is lowered: every slice of a tiled
dimension must have stride 1, and a static start and size that are multiples of the tile.
Claimed for loads and stores (`ref[idx]`, `ref.at[...][idx] = v`) through refs allocated with
`TilingTransform` (then, optionally, `SwizzleTransform`), where every earlier index is known.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.interpret.values import ArrayVal, Const, DSliceVal, RefVal, SliceVal, Value, as_int
from wgmma_lsp.models.indexing import index_items, index_shape
from wgmma_lsp.models.stores import _expanded
from wgmma_lsp.rules import tiled_index_type, tiled_slice

_FULL = SliceVal(Const(None), Const(None), Const(None))


def _slice_params(item: Value, dim: int) -> tuple[object, object, object] | None:
    """(start, size, stride) as `Slice` has them: ints, or None for a traced start."""
    if isinstance(item, SliceVal):
        parts = [p.value if isinstance(p, Const) else ... for p in (item.start, item.stop, item.step)]
        if not all(p is None or isinstance(p, int) and not isinstance(p, bool) for p in parts):
            return None
        if parts[2] is not None and parts[2] < 1:
            return None
        r = range(dim)[slice(*parts)]
        return (r.start, len(r), r.step)
    if isinstance(item, DSliceVal):
        start: object = as_int(item.start)
        if start is None:
            if not (isinstance(item.start, ArrayVal) and item.start.shape == ()):
                return None
            start = "traced"
        size, stride = as_int(item.size), as_int(item.stride)
        if size is None or stride is None:
            return None
        return (start, size, stride)
    return None


#: (JAX version, lowering semantics) pairs whose lowering of a load/store through a tiled ref
#: commutes the slices as mirrored here, by the ground truth of docs/coverage.md (rows 94-97):
#: 0.12 raises the same errors on the same lines under both semantics, except that its Lane
#: lowering rejects a slice of a swizzled-only ref with another error (0.12.0.1; 0.12.1's commutes
#: it again, as 0.10's: fixture lowering_kernel/swizzle_only_slices_by_version.py).
TILED = {((0, 10), "lane"), ((0, 12), "lane"), ((0, 12), "warpgroup")}
SWIZZLED_ONLY = {((0, 10), "lane"), ((0, 12), "warpgroup")}


def check_tiled_indexing(interp, ref: RefVal, index: Value, node: ast.AST) -> None:
    v = installed()
    if v is None or (v[:2], interp.kernel.lowering) not in TILED:
        return
    root = ref.root()
    if root.kind != "plain" or root.space != "smem":
        return
    own = root.transforms
    if len(own) == 1 and own[0].kind == "swizzle":
        if (v[:2], interp.kernel.lowering) in SWIZZLED_ONLY or (interp.kernel.lowering == "lane"
                                                                and matches("0.12,>=0.12.1")):
            _check_swizzled_indexing(interp, ref, index, node)
        return
    if not own or own[0].kind != "tiling" or any(t.kind != "swizzle" for t in own[1:]) or len(own) > 2:
        return
    tiling = tuple(own[0].params)
    if not tiling or not all(isinstance(t, int) for t in tiling):
        return
    indexers = _indexers(ref, index)
    if indexers is None:
        return  # transposes, unknown views: other paths
    shape = root.shape
    for idx in indexers:
        if shape is None or not all(isinstance(d, int) for d in shape) or len(shape) < len(tiling):
            return
        items = _full_items(idx, len(shape))
        if items is None:
            return
        for item, tile, dim in zip(items[-len(tiling):], tiling, shape[-len(tiling):]):
            params = _slice_params(item, dim)  # type: ignore[arg-type]
            if params is None:
                if _integer(item):
                    interp.report(tiled_index_type.RULE, tiled_index_type.MESSAGE, interp.span(node),
                                  node.lineno - 1)
                return  # integer indices (WG099) or unknown slices
            start, size, stride = params
            if stride != 1:
                interp.report(tiled_slice.RULE, f"Strided slices unsupported. Got stride: {stride}",
                              interp.span(node), node.lineno - 1)
                return
            if start == "traced":
                if size % tile:  # type: ignore[operator]
                    return  # JAX prints the traced start: not reproducible
                continue
            if start % tile or size % tile:  # type: ignore[operator]
                interp.report(tiled_slice.RULE,
                              f"Expected slice start ({start}) and slice size ({size}) to be divisible "
                              f"by the tile size ({tile})", interp.span(node), node.lineno - 1)
                return
        shape = index_shape(shape, idx)


def _integer(item: Value) -> bool:
    """A literal integer index (traced indices are not claimed: their type at lowering is not
    checked against JAX)."""
    return isinstance(item, Const) and isinstance(item.value, int) and not isinstance(item.value, bool)


def _full_items(idx: Value, ndim: int) -> list[Value] | None:
    """One index's items, one per dimension (`...` expanded, missing trailing dims as `:`);
    None when it has more items than dimensions."""
    items = _expanded(index_items(idx), ndim)
    if len(items) > ndim:
        return None
    return items + [_FULL] * (ndim - len(items))


def _indexers(ref: RefVal, index: Value) -> list[Value] | None:
    """The indices applied after the root's own transforms (`ref.at[i]`...), then `index`;
    None when a view other than indexing comes between."""
    out: list[Value] = []
    for t in ref.transforms[len(ref.root().transforms):]:
        if t.kind != "index" or not t.params:
            return None
        out.append(t.params[0])
    return out + [index]


def _check_swizzled_indexing(interp, ref: RefVal, index: Value, node: ast.AST) -> None:
    """`UnswizzleRef.commute_ndindexer` for a ref swizzled but not tiled: the minor dimension
    (one swizzle span) cannot be sliced."""
    root = ref.root()
    swizzle = root.transforms[0].params[0] if root.transforms[0].params else None
    indexers = _indexers(ref, index)
    if not isinstance(swizzle, int) or indexers is None or T.concrete(root.dtype) is None:
        return

    elems = swizzle * 8 // T.itemsize_bits(root.dtype)
    shape = root.shape
    for idx in indexers:
        if shape is None or len(shape) < 2 or not all(isinstance(d, int) for d in shape):
            return
        items = _full_items(idx, len(shape))
        if items is None:
            return
        if not all(isinstance(i, (SliceVal, DSliceVal)) for i in items[-2:]):
            return  # integer indices in the two minor dims: another message
        last = items[-1]
        params = _slice_params(last, shape[-1])  # type: ignore[arg-type]
        if params is None or params[0] == "traced":
            return
        if isinstance(last, SliceVal):
            raw = [p.value if isinstance(p, Const) else ... for p in (last.start, last.stop, last.step)]
            bad = (raw[2] not in (None, 1)) or (raw[0] not in (None, 0)) or (raw[1] not in (None, elems))
        else:
            bad = params[0] != 0 or params[1] != elems
        if bad:
            interp.report(tiled_slice.RULE, "Swizzled dims cannot be sliced", interp.span(node),
                          node.lineno - 1)
            return
        shape = index_shape(shape, idx)

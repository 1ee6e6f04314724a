"""Which part of its buffer a ref access touches: a box of index intervals, or None (unknown).

A view `smem.at[0:32]` or an access `smem[pl.ds(32, 32), :]` is a box in the coordinates of
the allocation it is a view of (`RefVal.root()`), when every index item is static: an int, a
slice with constant bounds and unit step, a `pl.ds(start, size)` with constant start and size.
Anything else (a loop index, a transpose or reshape before an index) is unknown, and an unknown
box proves no overlap: the analysis never reports a race on it.
"""

from __future__ import annotations

from wgmma_lsp.interpret.values import Const, DSliceVal, RefVal, SliceVal, Value, as_int
from wgmma_lsp.models.indexing import index_items

Box = tuple[tuple[int, int], ...]  # per dimension of the allocation: [start, stop)


def _item_interval(item: Value, lo: int, hi: int) -> tuple[tuple[int, int], bool] | None:
    """The interval (within [lo, hi)) an index item selects, and whether it keeps the dimension."""
    size = hi - lo
    n = as_int(item)
    if n is not None:
        if n < 0:
            n += size
        return ((lo + n, lo + n + 1), False) if 0 <= n < size else None
    if isinstance(item, SliceVal):
        if not (isinstance(item.step, Const) and item.step.value in (None, 1)):
            return None
        parts = []
        for p in (item.start, item.stop):
            if isinstance(p, Const) and p.value is None:
                parts.append(None)
            else:
                v = as_int(p)
                if v is None:
                    return None
                parts.append(v)
        r = range(size)[slice(parts[0], parts[1])]
        return (lo + r.start, lo + r.start + len(r)), True
    if isinstance(item, DSliceVal):
        start, length, stride = as_int(item.start), as_int(item.size), as_int(item.stride)
        if start is None or length is None or stride != 1 or start < 0 or start + length > size:
            return None
        return (lo + start, lo + start + length), True
    return None


def _apply(box: list[tuple[int, int]], live: list[int], index: Value) -> bool:
    """Narrow `box` by `index` over the `live` (not yet integer-indexed) dimensions."""
    items = index_items(index)
    if any(isinstance(i, Const) and i.value is Ellipsis for i in items):
        at = next(k for k, i in enumerate(items) if isinstance(i, Const) and i.value is Ellipsis)
        if sum(1 for i in items if isinstance(i, Const) and i.value is Ellipsis) > 1:
            return False
        full = SliceVal(Const(None), Const(None), Const(None))
        items = items[:at] + [full] * max(0, len(live) - len(items) + 1) + items[at + 1:]
    if len(items) > len(live):
        return False
    kept: list[int] = []
    for k, dim in enumerate(live):
        if k >= len(items):
            kept.append(dim)
            continue
        got = _item_interval(items[k], *box[dim])
        if got is None:
            return False
        box[dim] = got[0]
        if got[1]:
            kept.append(dim)
    live[:] = kept
    return True


def box_of(ref: RefVal, index: Value | None = None) -> Box | None:
    """The box of `ref`'s allocation that `ref[index]` (or the whole view) touches."""
    root = ref.root()
    shape = root.shape
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    box = [(0, d) for d in shape]  # type: ignore[misc]
    live = list(range(len(shape)))
    for t in ref.transforms[len(root.transforms):] if ref is not root else ():
        if t.kind != "index" or not t.params:
            return None  # a transpose / reshape of a view: coordinates not followed
        if not _apply(box, live, t.params[0]):
            return None
    if index is not None and not _apply(box, live, index):
        return None
    return tuple(box)


def overlap(a: Box | None, b: Box | None) -> bool:
    """True only when both boxes are known and share an element."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(x0 < y1 and y0 < x1 for (x0, x1), (y0, y1) in zip(a, b))


def may_overlap(a: Box | None, b: Box | None) -> bool:
    """False only when both boxes are known and disjoint."""
    if a is None or b is None or len(a) != len(b):
        return True
    return overlap(a, b)

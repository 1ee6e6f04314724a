"""Lane: a load through a slice of an SMEM allocation swizzled but not tiled (WG098).

JAX 0.12's Lane `_get_lowering_rule` (jax/_src/pallas/mosaic_gpu/lowering.py) takes the swizzle
off the transforms first ("Swizzle always applies first, to the raw addresses"), so the slices
behind it are never commuted past the swizzle (JAX 0.10 commutes them and refuses a sliced
minor dimension, `Swizzled dims cannot be sliced`: WG082, models/tiled_indexing.py). They
become a `memref` subview, no tiling is left, and a plain load (no layout hint) of a non-scalar
with a swizzle raises `Unsupported swizzle transform with strided layout` at the load, like the
whole load of such a buffer (models/swizzle_only_loads.py; catalog row 97 on 0.12). JAX 0.10
raises the same where the slices leave the minor dimension whole (they commute).

JAX 0.12.1's Lane lowering commutes the slices past the swizzle again, as 0.10 does
(`_handle_transforms` bubbles the indexers up: a sliced minor dimension is WG082), and prints
the load's layout hint instead: `Unsupported swizzle transform for layout: None`. A load whose
next operation is a `plgpu.layout_cast` of it gets the cast's layout as its hint
(`out_layout_hint`): a tiled one passes this check, another one is printed; not claimed, on any
version.

Claimed for loads through `.at[...]` views and indices made of static, unit-stride slices whose
result is not a scalar, of the allocations `swizzle_only_loads.swizzled_only` accepts (fixture
lowering_kernel/swizzle_only_slices_by_version.py, checked against 0.10.2, 0.12.0.1 and 0.12.1).
"""

from __future__ import annotations


from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.interpret.values import ArrayVal, Const, DSliceVal, RefVal, SliceVal, Value
from wgmma_lsp.models.indexing import index_items
from wgmma_lsp.models.lane_layouts import cast_right_after
from wgmma_lsp.models.registry import GETITEM
from wgmma_lsp.models.swizzle_only_loads import swizzled_only, whole_load
from wgmma_lsp.rules import swizzle_without_tiling

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


def _static_slice(item: Value) -> bool:
    if isinstance(item, Const):
        return item.value is Ellipsis
    if isinstance(item, SliceVal):
        ends = (item.start, item.stop)
        return (all(isinstance(e, Const) and (e.value is None or type(e.value) is int) for e in ends)
                and isinstance(item.step, Const) and item.step.value in (None, 1))
    if isinstance(item, DSliceVal):
        return all(isinstance(v, Const) and type(v.value) is int for v in (item.start, item.size)) \
            and isinstance(item.stride, Const) and item.stride.value == 1
    return False


def _sliced_view(ref: RefVal, index: Value) -> bool:
    """A view of the allocation made of static unit-stride slices only (not the whole ref)."""
    views = ref.transforms[len(ref.root().transforms):]
    if any(t.kind != "index" or not t.params for t in views):
        return False
    indexers = [t.params[0] for t in views] + [index]
    if not views and isinstance(index, Const) and index.value is Ellipsis:
        return False  # the whole load: swizzle_only_loads
    return all(all(_static_slice(i) for i in index_items(idx)) for idx in indexers)


def _minor_untouched(ref: RefVal, index: Value) -> bool:
    """No indexer names the minor dimension (JAX 0.10 commutes the slices past the swizzle,
    which refuses a sliced minor dimension: WG082)."""
    rank = len(ref.root().shape or ())
    views = ref.transforms[len(ref.root().transforms):]
    for idx in [t.params[0] for t in views] + [index]:
        items = index_items(idx)
        if isinstance(idx, Const) and idx.value is Ellipsis:
            continue
        if any(isinstance(i, Const) and i.value is Ellipsis for i in items) or len(items) >= rank:
            return False
    return True


def _sliced_load(ref: Value, index: Value, out: Value) -> bool:
    return isinstance(ref, RefVal) and swizzled_only(ref.root()) and _sliced_view(ref, index) \
        and (matches("0.12,<0.12.1") or _minor_untouched(ref, index)) \
        and isinstance(out, ArrayVal) and bool(out.shape)


def _wrap_loads() -> None:
    get = GETITEM["ref"]

    def getitem(interp: Any, ref: Value, index: Value, node: Any) -> Value:
        out = get(interp, ref, index, node)
        if node is None or interp.kernel.lowering != "lane":
            return out
        v = installed()
        if v is None or v[:2] not in ((0, 10), (0, 12)):
            return out
        if (whole_load(ref, index) or _sliced_load(ref, index, out)) and not cast_right_after(interp, node):
            interp.report(swizzle_without_tiling.RULE, swizzle_without_tiling.message(), interp.span(node),
                          node.lineno - 1)
        return out

    GETITEM["ref"] = getitem


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 36


def install() -> None:
    """Extend the ref load model, for the whole loads (models/swizzle_only_loads.py) and the
    loads through slices alike (called once by `registry.load_all`, after every model module was
    imported: importing this module changes no table)."""
    _wrap_loads()

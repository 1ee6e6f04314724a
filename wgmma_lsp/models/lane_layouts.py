"""Layout failures of the Lane lowering that are decidable from the source: WG086, WG087.

Mirrors jax/_src/pallas/mosaic_gpu/lowering.py `_get_lowering_rule` / `_swap_lowering_rule`
(Lane) and jax/experimental/mosaic/gpu/fragmented_array.py (0.10.2, 0.12.0.1, 0.12.1):

- a whole load or store (`s_ref[...]`) of an SMEM allocation transformed by a 2-D
  `TilingTransform` alone raises "Tiling without swizzle is not supported." (WG086; 0.12.1:
  "Unsupported transforms: [UntilingTransform(tiling=(8, 32))]");
- a whole load of an SMEM allocation tiled `(8, swizzle // itemsize)` and swizzled lands in the
  WGMMA register layout (tiles of 64 x 8): fewer than (or not a multiple of) 64 rows raise
  "Tiling ((64, 8), (16, 8), (8, 8), (2,)) does not apply to shape (32, 128)" at the load; a
  `keepdims=True` sum/max/min of such an array fails at the reduction too (WG087): in 0.10 its
  `(64, 1)` result has no WGMMA tiling (the same message), in 0.12 the broadcast that restores the
  kept dimension finds no layout ("No compatible layout found for the broadcast result. …",
  lowering.py `_broadcast_in_dim_lowering_rule`).

Only allocations (not `.at[...]` views, not pipeline blocks), whole-ref `[...]` accesses, 2-D
refs of known shape and dtype, kernels lowered with Lane semantics, on the JAX versions the
fixtures check. Warpgroup semantics fails in layout inference instead, and is not claimed.
A load whose next operation is a `plgpu.layout_cast` of it is not checked for WG087: the lowering
gives such a load the cast's layout (`out_layout_hint`, lowering.py `lower_jaxpr_to_mosaic_gpu`),
and an Ampere `MMA_RHS` cast of a 32-row tile is fine (`cast_right_after`).
"""

from __future__ import annotations


from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.interpret.values import ArrayVal, Const, RefVal, Value
from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.models import array_reductions, implicit_copies  # noqa: F401 - wrapped after theirs
from wgmma_lsp.models.indexing import is_whole
from wgmma_lsp.models.registry import GETITEM, METHODS, MODELS, SETITEM
from wgmma_lsp.rules import tiled_layout_shape, tiling_without_swizzle

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: The layout a whole tiled+swizzled load gives (ArrayVal.layout), read by the reductions.
WGMMA_LOADED = "wgmma (tiled load)"


def _lane(interp: Any) -> bool:
    v = installed()
    return interp.kernel.lowering == "lane" and v is not None and v[:2] in ((0, 10), (0, 12))


def _allocation(ref: Value) -> tuple[tuple[int, int], T.DType, list] | None:
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space == "smem" and ref.base is None
            and ref.origin_desc.startswith(("run_scoped", "pallas_call scratch"))):
        return None
    shape, dtype = ref.shape, T.concrete(ref.dtype)
    if shape is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape) or dtype is None:
        return None
    return shape, dtype, list(ref.transforms)  # type: ignore[return-value]


def _tiling_only(transforms: list) -> bool:
    return len(transforms) == 1 and transforms[0].kind == "tiling" and len(transforms[0].params) == 2


def _tiling_only_message(tiling: tuple, shape: tuple[int, int], load: bool) -> str | None:
    """WG086's text in the installed JAX's words; None where it is not claimed. 0.12.1's Lane
    load/store (lowering.py `_get_lowering_rule` / `_swap_lowering_rule`) no longer checks the
    tiling: the `UntilingTransform` left after the indexers were commuted past it matches no case,
    "Unsupported transforms: [UntilingTransform(tiling=(8, 32))]". A store of a single element
    takes its scalar case first there (not claimed)."""
    template = tiling_without_swizzle.RULE.installed_template()
    if not matches(">=0.12.1"):
        return template
    if not all(type(t) is int for t in tiling) or (not load and shape[0] * shape[1] == 1):
        return None
    return template.format(transforms=f"[UntilingTransform(tiling={tuple(tiling)!r})]")


def _tiled_swizzled(transforms: list, dtype: T.DType) -> bool:
    if not (len(transforms) == 2 and transforms[0].kind == "tiling" and transforms[1].kind == "swizzle"):
        return False
    tiling, swizzle = transforms[0].params, transforms[1].params
    if len(tiling) != 2 or len(swizzle) != 1 or tiling[0] != 8:
        return False
    return tiling[1] * T.itemsize_bits(dtype) == swizzle[0] * 8


def _access(interp: Any, ref: Value, index: Value, node: Any, load: bool) -> bool:
    """Checks of a whole access; True when the loaded value has the WGMMA layout."""
    if node is None or not is_whole(index) or not _lane(interp):
        return False
    alloc = _allocation(ref)
    if alloc is None:
        return False
    shape, dtype, transforms = alloc
    if _tiling_only(transforms):
        text = _tiling_only_message(transforms[0].params, shape, load)
        if text is not None:
            interp.report(tiling_without_swizzle.RULE, text, interp.span(node), node.lineno - 1)
        return False
    if load and _tiled_swizzled(transforms, dtype):
        if cast_right_after(interp, node):
            return False  # the cast's layout, not WGMMA's
        if shape[0] % 64:
            interp.report(tiled_layout_shape.RULE, tiled_layout_shape.message(shape),
                          interp.span(node), node.lineno - 1)
            return False
        return True
    return False


def cast_right_after(interp: Any, node: Any) -> bool:
    """Is the load's next operation a `layout_cast` of it? Its lowering then takes the cast's
    layout as a hint (`out_layout_hint`: the jaxpr equation right after it casts its result). Read
    from the text where the node is (the document, or another module), in the two ways it is
    written: the load as the first argument of `layout_cast(` (on its line, or on the next line
    after one ending in `layout_cast(`), or assigned alone to a name that the next statement's
    line casts first thing (`x = s_ref[...]`, then `y = plgpu.layout_cast(x, layout)`)."""
    index = interp.where.lines if interp.where is not None else interp.lines
    line = getattr(node, "lineno", 0) - 1
    if not 0 <= line < len(index.lines) or getattr(node, "end_lineno", None) != node.lineno:
        return False
    raw = index.lines[line].encode("utf-8")
    before = raw[:node.col_offset].decode("utf-8", errors="replace").rstrip()
    if not before and line > 0:
        before = index.lines[line - 1].rstrip()
    if before.endswith("layout_cast("):
        return True
    after = raw[node.end_col_offset:].decode("utf-8", errors="replace").strip()
    target = _ASSIGNED.fullmatch(before)
    if target is None or (after and not after.startswith("#")):
        return False
    following = next((t.strip() for t in index.lines[line + 1:]
                      if t.strip() and not t.strip().startswith("#")), "")
    first = _FIRST_CAST.search(following)
    return first is not None and first.group(1) == target.group(1) and "(" not in following[:first.start()]


_ASSIGNED = LazyPattern(r"\s*([A-Za-z_]\w*)\s*=")  # `x =` before the load, and nothing else
# The first `layout_cast(<name>` on the next statement's line; no bracket may come before it
# (`y = plgpu.layout_cast(x, ...)`, not `y = f(z) + plgpu.layout_cast(x, ...)`: a call first).
_FIRST_CAST = LazyPattern(r"layout_cast\(\s*([A-Za-z_]\w*)\s*[,)]")


def _wrap_refs() -> None:
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp, ref, index, node):
        out = get(interp, ref, index, node)
        if _access(interp, ref, index, node, load=True) and isinstance(out, ArrayVal):
            return ArrayVal(out.shape, out.dtype, WGMMA_LOADED)
        return out

    def setitem(interp, ref, index, value, target, value_node, aug):
        put(interp, ref, index, value, target, value_node, aug)
        _access(interp, ref, index, target, load=False)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem


def _keepdims_reduction(interp: Any, x: Value, axis: Value, keepdims: Value, span: Any, line: int) -> None:
    if not _lane(interp) or span is None:
        return
    if not (isinstance(x, ArrayVal) and x.layout == WGMMA_LOADED and x.shape is not None and len(x.shape) == 2):
        return
    if not (isinstance(keepdims, Const) and keepdims.value is True):
        return
    if not (isinstance(axis, Const) and isinstance(axis.value, int) and not isinstance(axis.value, bool)
            and -2 <= axis.value < 2):
        return
    shape = list(x.shape)
    shape[axis.value % 2] = 1
    version = installed()
    text = (tiled_layout_shape.message(tuple(shape)) if version is not None and version[:2] == (0, 10)  # type: ignore[arg-type]
            else tiled_layout_shape.NO_BROADCAST_LAYOUT)
    interp.report(tiled_layout_shape.RULE, text, span, line)


def _wrap_reductions() -> None:
    for name in ("sum", "max", "min"):
        fn, meth = MODELS[f"jnp.{name}"], METHODS[f"array.{name}"]

        def model_(call: Call, fn=fn) -> Value:
            out = fn(call)
            _keepdims_reduction(call.interp, call.get(0), call.get(1, "axis", Const(None)),
                                call.get(99, "keepdims", Const(False)), call.span, call.line)
            return out

        def method_(obj: Value, call: Call, meth=meth) -> Value:
            out = meth(obj, call)
            _keepdims_reduction(call.interp, obj, call.get(0, "axis", Const(None)),
                                call.get(99, "keepdims", Const(False)), call.span, call.line)
            return out

        MODELS[f"jnp.{name}"], METHODS[f"array.{name}"] = model_, method_


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 30


def install() -> None:
    """Extend the models registered by other modules (called once by `registry.load_all`, after
    every model module was imported: importing this module changes no table)."""
    _wrap_refs()
    _wrap_reductions()

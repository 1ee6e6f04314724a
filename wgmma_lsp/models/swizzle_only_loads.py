"""A Lane load of an SMEM allocation swizzled but not tiled: WG098.

Mirrors jax/_src/pallas/mosaic_gpu/lowering.py `_get_lowering_rule` (Lane; 0.10.2 and 0.12.0.1):
once the swizzle is taken off the transforms, no tiling is left, so the load is strided, and
with no layout hint (a plain `s_ref[...]`) a swizzle there raises "Unsupported swizzle transform
with strided layout" at the load.

Only allocations (`pl.run_scoped`, `plgpu.kernel` / pallas_call scratch; not `.at[...]` views,
not pipeline blocks), whole-ref `[...]` loads of a non-scalar ref of known shape, a single
`SwizzleTransform`, kernels lowered with Lane semantics, on the JAX versions the fixtures check.
Stores depend on the stored value's layout and are not claimed; nor is Warpgroup semantics
(another message, from layout inference).
"""

from __future__ import annotations

from typing import Any

from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import Const, RefVal, Value
from wgmma_lsp.models import lane_layouts, refs  # noqa: F401 - their ref models are wrapped below
from wgmma_lsp.models.registry import GETITEM
from wgmma_lsp.rules import swizzle_without_tiling


def _lane(interp: Any) -> bool:
    v = installed()
    return interp.kernel.lowering == "lane" and v is not None and v[:2] in ((0, 10), (0, 12))


def swizzled_only(ref: Value) -> bool:
    """An SMEM allocation of known non-scalar shape whose only transform is a swizzle."""
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space == "smem" and ref.base is None
            and ref.origin_desc.startswith(("run_scoped", "pallas_call scratch", "plgpu.kernel scratch"))):
        return False
    shape = ref.shape
    if shape is None or not shape or not all(isinstance(d, int) for d in shape):
        return False
    t = list(ref.transforms)
    return len(t) == 1 and t[0].kind == "swizzle"


def _wrap_loads() -> None:
    get = GETITEM["ref"]

    def getitem(interp, ref, index, node):
        out = get(interp, ref, index, node)
        if node is not None and isinstance(index, Const) and index.value is Ellipsis and _lane(interp) \
                and swizzled_only(ref):
            interp.report(swizzle_without_tiling.RULE, swizzle_without_tiling.MESSAGE,
                          interp.span(node), node.lineno - 1)
        return out

    GETITEM["ref"] = getitem


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 35


def install() -> None:
    """Extend the ref load model (called once by `registry.load_all`, after every model module
    was imported: importing this module changes no table)."""
    _wrap_loads()

"""A Lane load of an SMEM allocation swizzled but not tiled: WG098.

Mirrors jax/_src/pallas/mosaic_gpu/lowering.py `_get_lowering_rule` (Lane; 0.10.2, 0.12.0.1, 0.12.1):
once the swizzle is taken off the transforms, no tiling is left, so the load is strided, and
with no layout hint (a plain `s_ref[...]`) a swizzle there raises "Unsupported swizzle transform
with strided layout" at the load (0.12.1: "Unsupported swizzle transform for layout: None").

Only allocations (`pl.run_scoped`, `plgpu.kernel` / pallas_call scratch; not `.at[...]` views,
not pipeline blocks), whole-ref `[...]` loads of a non-scalar ref of known shape, a single
`SwizzleTransform`, kernels lowered with Lane semantics, on the JAX versions the fixtures check.
Stores depend on the stored value's layout and are not claimed; nor is Warpgroup semantics
(another message, from layout inference). The load model is extended once for this and for the
loads through slices (models/swizzle_only_views.py, whose `install` reports both).
"""

from __future__ import annotations

from wgmma_lsp.interpret.values import Const, RefVal, Value


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


def whole_load(ref: Value, index: Value) -> bool:
    """`ref[...]` of such an allocation (reported by the one load wrapper of WG098,
    models/swizzle_only_views.py)."""
    return isinstance(index, Const) and index.value is Ellipsis and swizzled_only(ref)

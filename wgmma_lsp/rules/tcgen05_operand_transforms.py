"""WG078 tcgen05-operand-transforms: Lane: tcgen05_mma SMEM operands tiled (8, swizzle // itemsize) and swizzled alike."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG078",
    name="tcgen05-operand-transforms",
    apis=("plgpu.tcgen05_mma",),
    summary="Lane: tcgen05_mma SMEM operands tiled (8, swizzle // itemsize) and swizzled alike.",
    template="MMA lhs tiling does not fit swizzle. lhs_tiling={lhs_tiling} expected={(8, swizzle_elems)}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _tcgen05_mma_lowering (Lane); "
               "mosaic/gpu/layout_inference.py: _tcgen05_mma_constraint_system (Warpgroup)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    table_message="`MMA lhs tiling does not fit swizzle. …` / `MMA rhs tiling does not fit swizzle …` / `MMA rhs swizzle must match lhs swizzle. …`; an rhs without transforms (JAX: a bare `AssertionError`); Warpgroup: `Failed to infer a possible set of layouts…` (no kernel line) for an operand whose own transforms are no valid MMA tiling",
    doc_file=doc_path(__file__),
    catalog_rows=(61, 62, 63,),
)

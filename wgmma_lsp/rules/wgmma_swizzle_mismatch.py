"""WG022 wgmma-swizzle-mismatch: WGMMA lhs and rhs in SMEM with different swizzles."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

LANE_MESSAGE = "WGMMA rhs swizzle must match lhs swizzle"

RULE = Rule(
    code="WG022",
    name="wgmma-swizzle-mismatch",
    apis=("plgpu.wgmma", "plgpu.SwizzleTransform"),
    summary="WGMMA lhs and rhs SMEM operands must use the same swizzle.",
    template=LANE_MESSAGE,
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering (Lane); "
               "mosaic/gpu/layout_inference.py (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(19, 36),
    table_message="`WGMMA rhs swizzle must match lhs swizzle` (Lane); `Failed to infer a possible set of "
                  "layouts…` (Warpgroup)",
    semantics=("lane", "warpgroup"),
)

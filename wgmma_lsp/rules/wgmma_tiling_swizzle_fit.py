"""WG021 wgmma-tiling-swizzle-fit: a WGMMA operand's tiling is not (8, swizzle // itemsize)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG021",
    name="wgmma-tiling-swizzle-fit",
    apis=("plgpu.wgmma", "plgpu.TilingTransform"),
    summary="WGMMA SMEM operands must be tiled (8, swizzle // itemsize).",
    template="WGMMA lhs tiling does not fit swizzle. Got tiling={tiling}, expected (8, {swizzle_elems}) / "
             "WGMMA rhs tiling does not fit swizzle",
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering (Lane); "
               "mosaic/gpu/layout_inference.py (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(18, 20),
    table_message="`WGMMA lhs tiling does not fit swizzle. Got tiling=(16, 64), expected (8, 64)` (Lane); "
                  "`Failed to infer a possible set of layouts…` (Warpgroup)",
    semantics=("lane", "warpgroup"),
)

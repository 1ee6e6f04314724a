"""WG020 wgmma-operand-transforms: a WGMMA operand with tiling but no swizzle, or swizzle but no
tiling."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG020",
    name="wgmma-operand-transforms",
    apis=("plgpu.wgmma", "plgpu.TilingTransform", "plgpu.SwizzleTransform"),
    summary="WGMMA SMEM operands need both TilingTransform and SwizzleTransform, in that order.",
    template="WGMMA lhs has unsupported transforms: {a_transforms}. / WGMMA rhs has unsupported transforms: {b_transforms}.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering (Lane); "
               "lowering.py _handle_transforms (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(16, 17),
    table_message="`WGMMA lhs has unsupported transforms: [UntilingTransform(tiling=(8, 64))].` (Lane); "
                  "`Unsupported transforms [<SwizzlingMode.k128ByteSwizzle: 128>]` (Warpgroup, swizzle only; "
                  "JAX 0.12: `Failed to infer a possible set of layouts…`, for a tiling only too)",
    semantics=("lane", "warpgroup"),
)

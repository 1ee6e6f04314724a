"""WG033 wgmma-element-type: WGMMA operands of a type the instruction does not take."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

VERIFIER = ("'mosaic_gpu.wgmma' op operand #1 must be 2D memref of A type supported by the `a` and `b` "
            "operands of the `wgmma.mma_async` instruction values or vector of A type supported by the "
            "`a` and `b` operands of the `wgmma.mma_async` instruction values of ranks 2,")

RULE = Rule(
    code="WG033",
    name="wgmma-element-type",
    apis=("plgpu.wgmma",),
    summary="WGMMA operands must be f32 (tf32), bf16, f16, float8_e4m3fn, float8_e5m2 or int8.",
    template="Unsupported element type: {element_type}",
    exception="NotImplementedError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma (Lane); the mosaic_gpu.wgmma op verifier (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(26, 35),
    table_message="`Unsupported element type: i16` (Lane); `'mosaic_gpu.wgmma' op operand #1 must be 2D memref "
                  "of A type supported by …` (Warpgroup)",
    semantics=("lane", "warpgroup"),
)

"""WG025 wgmma-transpose-16bit: an MN-major (transposed) WGMMA operand of an 8-bit or f32 type."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG025",
    name="wgmma-transpose-16bit",
    apis=("plgpu.wgmma",),
    summary="Only 16-bit WGMMA operands may be MN-major; 8-bit and f32 operands must be K-major.",
    template="Only f16 WGMMA supports transposes",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma_m64",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(25,),
    semantics=("lane", "warpgroup"),
)

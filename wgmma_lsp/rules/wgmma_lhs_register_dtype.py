"""WG026 wgmma-lhs-register-dtype: a WGMMA lhs in registers of a type the instruction cannot take
from registers (f32/tf32 must stay in SMEM)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG026",
    name="wgmma-lhs-register-dtype",
    apis=("plgpu.wgmma",),
    summary="A WGMMA lhs in registers must be f16, bf16, i8 or fp8; f32 (tf32) lhs must be in SMEM.",
    template="Only f16, bf16, i8, f8e5m2, f8e4m3fn are supported for A in registers, got {element_type2}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(29,),
    semantics=("lane", "warpgroup"),
)

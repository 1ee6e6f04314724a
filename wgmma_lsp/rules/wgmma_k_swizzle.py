"""WG024 wgmma-k-swizzle: a WGMMA whose K is not a multiple of one swizzle atom."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG024",
    name="wgmma-k-swizzle",
    apis=("plgpu.wgmma",),
    summary="WGMMA's K must be a multiple of swizzle // itemsize (64 for bf16 with a 128-byte swizzle).",
    template="K must be a multiple of {k_group_elems}, got: {k}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(28,),
    semantics=("lane", "warpgroup"),
)

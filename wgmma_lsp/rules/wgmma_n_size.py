"""WG023 wgmma-n-size: a WGMMA with N > 256 (one instruction group)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG023",
    name="wgmma-n-size",
    apis=("plgpu.wgmma",),
    summary="One plgpu.wgmma computes at most N = 256 columns (a multiple of 8).",
    template="N must be a multiple of 8 and <= 256, got: {n}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: wgmma",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(27,),
    semantics=("lane", "warpgroup"),
)

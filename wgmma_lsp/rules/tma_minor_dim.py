"""WG074 tma-minor-dim: TMA copies whole 16-byte units along the minor dimension."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG074",
    name="tma-minor-dim",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="TMA copies whole 16-byte units along the minor dimension.",
    template="Async copies require the number of bits copied along the last dimension to be divisible by 128, but got {zeroth_bw}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext._prepare_tma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(79,),
)

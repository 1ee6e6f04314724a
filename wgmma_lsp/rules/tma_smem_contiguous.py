"""WG075 tma-smem-contiguous: The SMEM side of a TMA copy must be a contiguous window."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG075",
    name="tma-smem-contiguous",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="The SMEM side of a TMA copy must be a contiguous window.",
    template="async_copy needs the SMEM reference to be contiguous, but got strides {smem_strides} for shape {smem_ref_ty.shape}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext.async_copy",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(88,),
)

"""WG071 tma-element-type: Lane: a TMA copy between refs of different element types."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG071",
    name="tma-element-type",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="Lane: a TMA copy between refs of different element types.",
    template="Expected same element type, got {element_type} and {dst_ref_ty.element_type}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext.async_copy",
    stage="lower",
    version_stages=((">=0.12", "trace"),),  # 0.12's copy primitive checks it while tracing
    semantics=("lane",),
    doc_file=doc_path(__file__),
    # 0.12 checks it while tracing the copy, in its own words (models/copy_checks.py).
    version_templates=((">=0.12", "Expected dtypes to match but src had type {src_ref.dtype} and dst had type "
                                  "{dst_ref.dtype}"),),
    catalog_rows=(76,),
)

"""WG072 tma-slice-shape: A TMA copy whose SMEM buffer does not have the GMEM slice's shape."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG072",
    name="tma-slice-shape",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="A TMA copy whose SMEM buffer does not have the GMEM slice's shape.",
    template="Expected the SMEM reference to have the same shape as the transformed slice: {tuple(smem_ref_ty.shape)} != {tuple(slice_shape[len(squeezed_dims):])}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext.async_copy",
    stage="lower",
    version_stages=((">=0.12", "trace"),),  # 0.12's copy primitive checks it while tracing
    semantics=("lane",),
    doc_file=doc_path(__file__),
    # 0.12 checks it while tracing the copy, in its own words (models/copy_checks.py).
    version_templates=((">=0.12", "Expected source shape to be {expected_src_shape}, but got {src_shape}. "
                                  "{partitioned_desc} / Expected shapes to match, but src has shape {src_shape} "
                                  "and dst has shape {dst_shape}"),),
    catalog_rows=(75,),
)

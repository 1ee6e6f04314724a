"""WG073 tma-gmem-strides: TMA needs every GMEM stride but the last to be a multiple of 16 bytes."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG073",
    name="tma-gmem-strides",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="TMA needs every GMEM stride but the last to be a multiple of 16 bytes.",
    template="async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext._prepare_tma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(77,),
    version_templates=((">=0.12", "Async copies require all GMEM strides except the last one to be a multiple "
                                  "of 16 bytes"),),
)

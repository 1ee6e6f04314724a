"""WG062 pipeline-delay-release: emit_pipeline with max_concurrent_steps <= the inputs' delay_release."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG062",
    name="pipeline-delay-release",
    apis=("plgpu.emit_pipeline",),
    summary="plgpu.emit_pipeline: max_concurrent_steps must exceed the inputs' delay_release.",
    template="max_concurrent_steps must be greater than all delay_release values, but "
             "max_concurrent_steps={max_concurrent_steps} and delay_release_levels={delay_release_levels}.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/pipeline.py: emit_pipeline",
    doc_file=doc_path(__file__),
    catalog_rows=(105,),
)

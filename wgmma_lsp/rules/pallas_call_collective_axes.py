"""WG097 pallas-call-collective-axes: a `plgpu.BlockSpec(collective_axes=...)` given to `pl.pallas_call`."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = ("collective_axes is not supported in pallas_call. Use plgpu.kernel with "
           "plgpu.emit_pipeline_warp_specialized instead.")

RULE = Rule(
    code="WG097",
    name="pallas-call-collective-axes",
    apis=("plgpu.BlockSpec", "pl.pallas_call"),
    summary="plgpu.BlockSpec(collective_axes=...) in a pl.pallas_call: only emit_pipeline_warp_specialized takes it.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: BlockSpec.to_block_mapping",
    doc_file=doc_path(__file__),
    catalog_rows=(68,),
)

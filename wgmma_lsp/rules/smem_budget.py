"""WG032 smem-budget: a kernel that allocates more shared memory than the GPU has per block."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG032",
    name="smem-budget",
    apis=("pl.run_scoped", "plgpu.kernel", "pl.pallas_call"),
    summary="All SMEM a kernel allocates (scratch, run_scoped, pipeline buffers x stages, barriers) "
            "must fit 227 KiB (232,448 bytes) on sm_90.",
    template="Mosaic GPU kernel exceeds available shared memory: smem_bytes={smem_bytes} > max_smem_bytes={max_smem_bytes}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/core.py: _launch (sizes from pallas/mosaic_gpu/lowering.py Resources)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(80,),
    semantics=("lane", "warpgroup"),
)

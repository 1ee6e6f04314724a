"""WG070 tma-bytes-per-warpgroup: Lane: a GMEM->SMEM copy must move a multiple of 128 bytes."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG070",
    name="tma-bytes-per-warpgroup",
    apis=("plgpu.copy_gmem_to_smem",),
    summary="Lane: a GMEM->SMEM copy must move a multiple of 128 bytes.",
    template="Only copies transferring a number of bytes divisible by the warpgroup size are supported. Got bytes={bytes} but warpgroup size is {WARPGROUP_SIZE}",
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _copy_gmem_to_smem_lowering (Lane)",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(78,),
)

"""WG083 tmem-columns: a kernel's TMEM allocations need more than the 512 columns of tensor memory."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG083",
    name="tmem-columns",
    apis=("plgpu.TMEM", "plgpu.kernel"),
    summary="All TMEM live at once, rounded up to a power of two, must fit in 512 columns.",
    template="After rounding up, got {ncols} columns, exceeding the limit of 512",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: tmem_alloc_exact_ncols (kernel TMEM from "
               "jax/_src/pallas/mosaic_gpu/lowering.py: _estimate_resources)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(109,),
)

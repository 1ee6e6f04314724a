"""WG083 tmem-columns: a kernel's TMEM allocations need more than the 512 columns of tensor memory."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG083",
    name="tmem-columns",
    apis=("plgpu.TMEM", "plgpu.kernel"),
    summary="All TMEM live at once, rounded up to a power of two, must fit in 512 columns.",
    template="After rounding up, got {ncols} columns, exceeding the limit of 512",
    # 0.12.1 words it with the limit of the GPU (576 on sm_107f; 512 elsewhere, and without one)
    version_templates=((">=0.12.1", "After rounding up, got {1 << (ncols - 1).bit_length()} columns, "
                                    "exceeding the limit of {max_cols}"),),
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: tmem_alloc_exact_ncols (kernel TMEM from "
               "jax/_src/pallas/mosaic_gpu/lowering.py: _estimate_resources)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(109,),
)

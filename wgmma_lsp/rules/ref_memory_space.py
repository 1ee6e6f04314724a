"""WG050 ref-memory-space: a TMA copy or barrier operation given a ref in the wrong memory space."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG050",
    name="ref-memory-space",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem", "plgpu.barrier_arrive",
          "plgpu.barrier_wait"),
    summary="TMA copies and barrier operations need their refs in GMEM or SMEM, as the operation says.",
    template="{name} must be a {memory_space.name.upper()} reference, got {aval}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _check_ref (copy_gmem_to_smem, "
               "copy_smem_to_gmem, barrier_arrive, barrier_wait abstract evals)",
    doc_file=doc_path(__file__),
    catalog_rows=(70, 71, 72, 73),
)

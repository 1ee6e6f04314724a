"""WG114 wait-count-negative: `plgpu.wgmma_wait(n)`, `plgpu.wait_smem_to_gmem(n)` or
`plgpu.wait_gmem_to_smem(n)` with a negative count (JAX 0.12's abstract evaluation)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG114",
    name="wait-count-negative",
    apis=("plgpu.wgmma_wait", "plgpu.wait_smem_to_gmem", "plgpu.wait_gmem_to_smem"),
    summary="A wait's count of operations left in flight must be >= 0 (JAX 0.12).",
    template="n must be a non-negative integer, got {n}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: the abstract evaluation of wgmma_wait, "
               "wait_smem_to_gmem and wait_gmem_to_smem",
    doc_file=doc_path(__file__),
    table_message="`n must be a non-negative integer, got -1` (JAX 0.12)",
)

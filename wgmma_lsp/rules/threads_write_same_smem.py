"""WG205 threads-write-same-smem: every thread of a block writes the same part of a shared SMEM buffer."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG205",
    name="threads-write-same-smem",
    apis=("plgpu.kernel",),
    summary="All the threads of a block (num_threads=n) write the same part of SMEM they share, unordered.",
    template="all {threads} threads of the block write this part of SMEM {aval}, which they share, with "
             "nothing ordering their writes",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/interpret_pallas_call.py: interpret_pallas_call "
               "(one simulated thread per warpgroup)",
    stage="hazard",
    doc_file=doc_path(__file__),
    table_message="(ours) `all 2 threads of the block write this part of SMEM …, which they share, …`",
)

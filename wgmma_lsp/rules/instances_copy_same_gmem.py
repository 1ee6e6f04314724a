"""WG206 instances-copy-same-gmem: every block (and thread) of the kernel copies out to the same GMEM."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG206",
    name="instances-copy-same-gmem",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.kernel"),
    summary="All the blocks / threads of a kernel copy out to the same part of GMEM, unordered.",
    template="all {instances} instances of the kernel ({blocks} blocks x {threads} threads) copy to this "
             "same part of {aval}: their writes race",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: AsyncCopySmemToGmemTask.post_read",
    stage="hazard",
    doc_file=doc_path(__file__),
    table_message="(ours) `all 2 instances of the kernel (2 blocks x 1 threads) copy to this same part of …`",
)

"""WG117 unknown-cluster-axis: a collective copy, prefetch, MMA or cluster barrier names an axis
that is not one of the kernel's cluster axes."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG117",
    name="unknown-cluster-axis",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.async_prefetch", "plgpu.tcgen05_mma", "plgpu.ClusterBarrier"),
    summary="The collective axes of a copy, prefetch, MMA or cluster barrier must be cluster axes of "
            "the kernel (its cluster_names).",
    template="Unknown cluster axis {axis_name}, available axes: {[*axis_names.cluster]}",
    exception="LookupError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _resolve_cluster_axis",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    table_message="`Unknown cluster axis wg, available axes: ['x']`",
)


def message(name: str, cluster: tuple[str, ...]) -> str:
    return f"Unknown cluster axis {name}, available axes: {list(cluster)}"

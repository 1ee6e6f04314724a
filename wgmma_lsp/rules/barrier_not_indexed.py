"""WG119 barrier-not-indexed: a barrier operation given a whole array of barriers
(`plgpu.Barrier(num_barriers=2)`) instead of one of them (`bar.at[i]`)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG119",
    name="barrier-not-indexed",
    apis=("plgpu.barrier_wait", "plgpu.barrier_arrive", "plgpu.copy_gmem_to_smem", "plgpu.tcgen05_mma",
          "plgpu.tcgen05_commit_arrive"),
    summary="A barrier operation takes one barrier: index an array of barriers with .at[i].",
    template="Operation is only valid for a single barrier, but barrier ref contains "
             "{self.num_barriers}. Individual barriers can be accessed by indexing into the ref.",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/utils.py: BarrierRef.get_ptr (and get_barrier_id)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    table_message="`Operation is only valid for a single barrier, but barrier ref contains 2. …`",
)


def message(num_barriers: int) -> str:
    return (f"Operation is only valid for a single barrier, but barrier ref contains {num_barriers}. "
            "Individual barriers can be accessed by indexing into the ref.")

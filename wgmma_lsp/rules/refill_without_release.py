"""WG210 refill-without-release: the producer thread refills a slot the consumer may still be using."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.barrier_wait(<the release barrier>)` before the copy: offered when the consumer
    arrives on a release barrier indexed the way the copy's barrier is (`empty.at[slot]` for
    `full.at[slot]`), and every step of the copy is such a refill (a wait before a first fill
    would never return)."""
    wait = finding.data.get("wait")
    if not wait:
        return []
    return insert_before(f"Wait on {wait.split('(', 1)[1][:-1]} first", source, finding.span.line, wait)


RULE = Rule(
    code="WG210",
    name="refill-without-release",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.barrier_wait", "plgpu.barrier_arrive"),
    summary="A producer thread refills SMEM that a consumer thread may still be using: no wait on "
            "a barrier the consumer arrives on after its use.",
    template="copy_gmem_to_smem overwrites SMEM {aval} that thread {consumer} uses at line {line} without "
             "waiting on a barrier thread {consumer} arrives on after that use{release}: the copy may "
             "overwrite the slot while it is still being read",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: Barrier.arrive, Barrier.wait",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.barrier_wait(<release barrier>)` before the copy",
    table_message="(ours) `copy_gmem_to_smem overwrites SMEM … that thread … uses at line … without waiting on a barrier …`",
)

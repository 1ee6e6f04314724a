"""WG215 roles-access-same-smem: two threads of different roles access the same SMEM, one writing, unordered."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import move_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """The access's thread waits later on a barrier the other thread arrives on after its access
    (and before anything that waits for this thread from the access on): that wait, moved up before
    the access. No wait of that kind: no fix (which barrier to add is the author's design)."""
    later = finding.data.get("later_wait_line")
    if later is None:
        return []
    return move_before("Move the wait up, before the access", source, finding.span.line, later)


RULE = Rule(
    code="WG215",
    name="roles-access-same-smem",
    apis=("plgpu.kernel", "pl.when", "plgpu.barrier_wait", "plgpu.barrier_arrive"),
    summary="Two threads of different roles (warp specialisation) access the same SMEM, one of them writing, "
            "with nothing ordering the two.",
    template="{access} SMEM {aval} in thread {thread} races with thread {other_thread}'s {other_access} "
             "at line {other_line}: neither thread waits, before its access, on a barrier the other "
             "arrives on after its own{detail}",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: _get, _swap; shared_memory.py: Barrier",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="move the thread's later `plgpu.barrier_wait` (on a barrier the other thread arrives on) up "
                "before the access",
    table_message="(ours) `Reading SMEM … in thread 1 races with thread 0's write at line …`",
)

"""WG200 smem-read-before-tma-wait: SMEM used before the copy_gmem_to_smem filling it is waited for."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_barrier_wait, move_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """The wait on the copy's barrier that comes too late, moved up before the access (a second
    wait on the same phase would never return); or, when none follows, a new
    `plgpu.barrier_wait(<the copy's barrier>)` before the access, if the copy and the access are
    in the same function (the barrier's spelling means the same there)."""
    later = finding.data.get("later_wait_line")
    if later is not None:
        if not finding.data.get("later_wait_same_function"):
            return []
        return move_before("Move the wait up, before the access", source, finding.span.line, later)
    if not finding.data.get("same_function"):
        return []
    return insert_barrier_wait(finding.data, source, finding.span.line)


RULE = Rule(
    code="WG200",
    name="smem-read-before-tma-wait",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.barrier_wait"),
    summary="SMEM is read, written or copied out before the TMA copy that fills it is waited for.",
    template="{access} SMEM {aval} before the copy_gmem_to_smem at line {copy_line} that fills it "
             "has completed: nothing waits on {barrier}, the barrier it arrives on, in between{detail}",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: AsyncCopyGmemToSmemTask, _barrier_wait",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="move the later `plgpu.barrier_wait(barrier)` up before the access, or insert one",
    table_message="(ours) `Reading SMEM … before the copy_gmem_to_smem at line … that fills it has completed …`",
)

"""WG217 tma-load-over-pending-load: a copy_gmem_to_smem into SMEM an earlier copy_gmem_to_smem may still be writing."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_barrier_wait, move_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Wait for the first copy before issuing the second: its later `barrier_wait` moved up, or a
    new one inserted — only when the first copy's barrier completes a phase with one arrival (a
    wait between the two copies of a two-arrival phase would never return), with the copy and the
    second load in the same function."""
    if not finding.data.get("one_arrival") or not finding.data.get("same_function"):
        return []
    later = finding.data.get("later_wait_line")
    if later is not None:
        return move_before("Move the wait up, before the second copy", source, finding.span.line, later)
    return insert_barrier_wait(finding.data, source, finding.span.line)


RULE = Rule(
    code="WG217",
    name="tma-load-over-pending-load",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.barrier_wait"),
    summary="A copy_gmem_to_smem writes SMEM an earlier copy_gmem_to_smem may still be writing (no wait in between).",
    template="copy_gmem_to_smem overwrites SMEM {aval} that the copy_gmem_to_smem at line {copy_line} may "
             "still be writing: the thread waits on nothing (not on {barrier}, the barrier that copy arrives "
             "on) in between",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: AsyncCopyGmemToSmemTask.post_read, _barrier_wait",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="move the first copy's later `plgpu.barrier_wait` up before the second copy, or insert one",
    table_message="(ours) `copy_gmem_to_smem overwrites SMEM … that the copy_gmem_to_smem at line … may still be writing …`",
)

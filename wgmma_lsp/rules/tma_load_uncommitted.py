"""WG204 tma-load-uncommitted: copy_gmem_to_smem over SMEM the thread accessed with no commit_smem() since."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.commit_smem()` before the copy."""
    prefix = finding.data.get("prefix")
    if prefix is None:
        return []
    return insert_before("Commit the SMEM accesses first", source, finding.span.line, f"{prefix}commit_smem()")


RULE = Rule(
    code="WG204",
    name="tma-load-uncommitted",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.commit_smem"),
    summary="copy_gmem_to_smem overwrites SMEM the thread read or wrote with no commit_smem() in between.",
    template="copy_gmem_to_smem overwrites SMEM {aval} {what} by the thread at line {line} with no "
             "plgpu.commit_smem() in between: the TMA engine's write is not ordered after it",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: AsyncCopyGmemToSmemTask.post_read",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.commit_smem()` before the copy",
    table_message="(ours) `copy_gmem_to_smem overwrites SMEM … read by the thread at line … with no plgpu.commit_smem() …`",
)

"""WG202 tma-store-uncommitted: copy_smem_to_gmem of SMEM written with no commit_smem() since."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.commit_smem()` before the copy."""
    prefix = finding.data.get("prefix")
    if prefix is None:
        return []
    return insert_before("Commit the SMEM writes first", source, finding.span.line, f"{prefix}commit_smem()")


RULE = Rule(
    code="WG202",
    name="tma-store-uncommitted",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.commit_smem"),
    summary="copy_smem_to_gmem copies SMEM the threads wrote without a commit_smem() in between.",
    template="copy_smem_to_gmem reads SMEM {aval} written at line {write_line} with no "
             "plgpu.commit_smem() in between: the TMA engine may not see the write",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: GpuClockBundle.commit_smem",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.commit_smem()` before the copy",
    table_message="(ours) `copy_smem_to_gmem reads SMEM … written at line … with no plgpu.commit_smem() in between …`",
)

"""WG216 copies-out-overlap-gmem: two copy_smem_to_gmem write overlapping GMEM with nothing ordering their writes."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Both copies from one thread: `plgpu.wait_smem_to_gmem(k)` (the writes too) before the
    second, `k` the copies issued between them. From two threads: none (a barrier between the
    threads is the author's design)."""
    prefix, newer = finding.data.get("prefix"), finding.data.get("newer")
    if prefix is None or not isinstance(newer, int) or newer < 0:
        return []
    return insert_before(f"Wait until at most {newer} SMEM->GMEM copies are writing", source,
                         finding.span.line, f"{prefix}wait_smem_to_gmem({newer})")


RULE = Rule(
    code="WG216",
    name="copies-out-overlap-gmem",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.wait_smem_to_gmem"),
    summary="Two copy_smem_to_gmem write overlapping GMEM while the first may still be writing it.",
    template="copy_smem_to_gmem writes GMEM {aval} that the copy_smem_to_gmem at line {store_line} may "
             "still be writing{detail}",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: AsyncCopySmemToGmemTask.post_read; "
               "shared_memory.py: GPUSharedMemory.wait_smem_to_gmem",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.wait_smem_to_gmem(k)` before the second copy (one thread)",
    table_message="(ours) `copy_smem_to_gmem writes GMEM … that the copy_smem_to_gmem at line … may still be writing …`",
)

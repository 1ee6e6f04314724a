"""WG207 gmem-access-during-tma-store: GMEM read or written while a copy_smem_to_gmem may still write it."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.wait_smem_to_gmem(k)` (the writes too, not only the reads) before the access."""
    prefix, newer = finding.data.get("prefix"), finding.data.get("newer")
    if prefix is None or newer is None:
        return []
    return insert_before(f"Wait until at most {newer} SMEM->GMEM copies are writing", source,
                         finding.span.line, f"{prefix}wait_smem_to_gmem({newer})")


RULE = Rule(
    code="WG207",
    name="gmem-access-during-tma-store",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.wait_smem_to_gmem", "plgpu.copy_gmem_to_smem"),
    summary="GMEM is read (or written) while a copy_smem_to_gmem may still be writing it.",
    template="{access} GMEM {aval} while the copy_smem_to_gmem at line {store_line} may still be writing "
             "it: no plgpu.wait_smem_to_gmem({newer}) (without wait_read_only) in between",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: GPUSharedMemory.wait_smem_to_gmem",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.wait_smem_to_gmem(k)` before the access",
    table_message="(ours) `copy_gmem_to_smem reads GMEM … while the copy_smem_to_gmem at line … may still be writing it …`",
)

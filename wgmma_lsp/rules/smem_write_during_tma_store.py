"""WG201 smem-write-during-tma-store: SMEM overwritten while a copy_smem_to_gmem may still read it."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.hazard_fixes import insert_before


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.wait_smem_to_gmem(k, wait_read_only=True)` before the write, `k` the number of
    copies issued after the racing one (they may stay in flight)."""
    prefix, newer = finding.data.get("prefix"), finding.data.get("newer")
    if prefix is None or newer is None:
        return []
    return insert_before(f"Wait until at most {newer} SMEM->GMEM copies are reading", source,
                         finding.span.line, f"{prefix}wait_smem_to_gmem({newer}, wait_read_only=True)")


RULE = Rule(
    code="WG201",
    name="smem-write-during-tma-store",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.wait_smem_to_gmem"),
    summary="SMEM is overwritten while a copy_smem_to_gmem may still be reading it.",
    template="{access} SMEM {aval} while the copy_smem_to_gmem at line {store_line} may still be reading "
             "it: no plgpu.wait_smem_to_gmem({newer}) or lower in between{detail}",
    exception="",  # not an exception: a data race, which JAX's interpret mode finds at run time
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: GPUSharedMemory.wait_smem_to_gmem",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="insert `plgpu.wait_smem_to_gmem(k, wait_read_only=True)` before the write",
    table_message="(ours) `Writing SMEM … while the copy_smem_to_gmem at line … may still be reading it …`",
)

"""WG203 store-in-flight-at-exit: the kernel ends while a copy_smem_to_gmem may still read SMEM."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.spans import Span


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.wait_smem_to_gmem(0, wait_read_only=True)` as the last statement of the kernel body
    (offered when the copy is in the body itself)."""
    prefix, at = finding.data.get("prefix"), finding.data.get("insert_at")
    if prefix is None or at is None:
        return []
    row, indent = at
    return [Fix("Wait for the copies out before the kernel ends",
                (TextEdit(Span(row, 0, row, 0), f"{indent}{prefix}wait_smem_to_gmem(0, wait_read_only=True)\n"),),
                True)]


RULE = Rule(
    code="WG203",
    name="store-in-flight-at-exit",
    apis=("plgpu.copy_smem_to_gmem", "plgpu.wait_smem_to_gmem"),
    summary="The kernel ends while a copy_smem_to_gmem may still be reading its SMEM.",
    template="the kernel may end while this copy_smem_to_gmem is still reading SMEM {aval}: no "
             "plgpu.wait_smem_to_gmem after it lets it finish",
    exception="",  # not an exception on the GPU (jax 0.12's interpret mode raises a ValueError)
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: GPUSharedMemory.kernel_thread_finished",
    stage="hazard",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="append `plgpu.wait_smem_to_gmem(0, wait_read_only=True)` to the kernel body",
    table_message="(ours) `the kernel may end while this copy_smem_to_gmem is still reading SMEM …`",
)

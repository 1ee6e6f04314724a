"""WG017 tcgen05-memory-spaces: `plgpu.tcgen05_mma` operands in the wrong memory space."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path


def fixes(finding: Finding, source: str) -> list[Fix]:
    """An accumulator allocated in SMEM: allocate it in TMEM (32-bit dtypes need no packing)."""
    from wgmma_lsp.rules.wgmma_accumulator_ref_type import reallocate

    if finding.data.get("operand") != "acc" or finding.data.get("bits") != 32:
        return []
    return reallocate(finding, source, "TMEM", "Allocate it in tensor memory")


RULE = Rule(
    code="WG017",
    name="tcgen05-memory-spaces",
    apis=("plgpu.tcgen05_mma",),
    summary="tcgen05_mma: the accumulator in TMEM, the lhs in SMEM or TMEM, the rhs in SMEM.",
    template="Accumulator must be a TMEM Ref. / LHS must be a TMEM/SMEM Ref. / RHS must be an SMEM Ref.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _tcgen05_mma_abstract_eval",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(48, 49, 50),
    table_message='`Accumulator must be a TMEM Ref.` / `LHS must be a TMEM/SMEM Ref.` / `RHS must be an SMEM Ref.`',
)

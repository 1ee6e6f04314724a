"""WG017 tcgen05-memory-spaces: `plgpu.tcgen05_mma` operands in the wrong memory space."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG017",
    name="tcgen05-memory-spaces",
    summary="tcgen05_mma: the accumulator in TMEM, the lhs in SMEM or TMEM, the rhs in SMEM.",
    template="Accumulator must be a TMEM Ref. / LHS must be a TMEM/SMEM Ref. / RHS must be an SMEM Ref.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _tcgen05_mma_abstract_eval",
    doc_file=doc_path(__file__),
)

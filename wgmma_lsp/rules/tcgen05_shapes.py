"""WG016 tcgen05-shapes: the accumulator and operand shapes of `plgpu.tcgen05_mma` do not chain."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG016",
    name="tcgen05-shapes",
    apis=("plgpu.tcgen05_mma",),
    summary="plgpu.tcgen05_mma needs acc (M, N), lhs (M, K) and rhs (K, N).",
    template="Accumulator and LHS have incompatible shapes. ... / Accumulator and RHS have incompatible shapes. ... / LHS and RHS have incompatible shapes. LHS: {a.shape}. RHS: {b.shape}.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: tcgen05_mma",
    doc_file=doc_path(__file__),
    catalog_rows=(44, 45, 46),
    table_message='`Accumulator and LHS have incompatible shapes. …` (and RHS, K)',
)

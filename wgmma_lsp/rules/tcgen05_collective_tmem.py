"""WG068 tcgen05-collective-tmem: a collective tcgen05 MMA on TMEM allocated without collective=True."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG068",
    name="tcgen05-collective-tmem",
    apis=("plgpu.tcgen05_mma",),
    summary="tcgen05_mma(collective_axis=...) needs its TMEM operands allocated with collective=True.",
    template="Accumulator Ref must be collective if collective_axis is set.",
    table_message="`Accumulator Ref must be collective if collective_axis is set.` (or `LHS Ref …`)",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _tcgen05_mma_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(66,),
)

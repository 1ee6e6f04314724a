"""WG069 tcgen05-scales-pair: a block-scaled tcgen05 MMA given one scale but not the other."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "a_scale and b_scale must both be present or absent."

RULE = Rule(
    code="WG069",
    name="tcgen05-scales-pair",
    apis=("plgpu.tcgen05_mma",),
    summary="tcgen05_mma: a_scale and b_scale go together.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: tcgen05_mma",
    doc_file=doc_path(__file__),
    catalog_rows=(47,),
)

"""WG081 tcgen05-n: Lane: tcgen05 MMA N a multiple of 8, and above 256 only 512."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG081",
    name="tcgen05-n",
    apis=("plgpu.tcgen05_mma",),
    summary="Lane: tcgen05 MMA N a multiple of 8, and above 256 only 512.",
    template="The only supported N > 256, is 512, but got N={n}",
    exception="NotImplementedError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    table_message="`The only supported N > 256, is 512, but got N={n}` / `In 1 CTA MMA, N must be a multiple of 8, got N={n}`",
    doc_file=doc_path(__file__),
    catalog_rows=(60,),
)

"""WG052 barrier-num-arrivals: a barrier that expects no arrivals."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG052",
    name="barrier-num-arrivals",
    apis=("plgpu.Barrier", "plgpu.ClusterBarrier"),
    summary="plgpu.Barrier / plgpu.ClusterBarrier need num_arrivals >= 1.",
    template="Num arrivals must be at least 1, but got {n}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: Barrier.__post_init__ / ClusterBarrier.__post_init__",
    stage="construct",
    doc_file=doc_path(__file__),
    catalog_rows=(81,),
)

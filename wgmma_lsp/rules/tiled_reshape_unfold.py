"""WG100 tiled-reshape-unfold: a reshaped view of a tiled SMEM ref that splits one of its dimensions."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = ("Unfolding dimensions is not supported when commuting an  `UntilingTransform` with a "
           "`ReshapeTransform`")

RULE = Rule(
    code="WG100",
    name="tiled-reshape-unfold",
    apis=("plgpu.TilingTransform",),
    summary="ref.reshape(...) of a tiled SMEM ref that splits (unfolds) a dimension: only folds commute with the tiling.",
    template=MESSAGE,
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: UntilingTransform.commute_reshape",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(99,),
)

"""WG082 tiled-slice: slicing a tiled SMEM ref off its tiles (Lane lowering)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG082",
    name="tiled-slice",
    apis=("plgpu.TilingTransform",),
    summary="Slices of a tiled ref's tiled dimensions must start and end on tile boundaries, stride 1.",
    template="Expected slice start ({start}) and slice size ({size}) to be divisible by the tile size ({tile})",
    table_message="`Expected slice start ({start}) and slice size ({size}) to be divisible by the tile "
                  "size ({tile})` / `Strided slices unsupported. Got stride: {ds.stride}` / `Swizzled dims cannot be sliced`",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: UntilingTransform.commute_ndindexer",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(94, 95, 96, 97),
)

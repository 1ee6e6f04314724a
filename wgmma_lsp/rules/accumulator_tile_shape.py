"""WG010 accumulator-tile-shape: a WGMMA accumulator whose M is not a multiple of 64 (or N of 8)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG010",
    name="accumulator-tile-shape",
    apis=("plgpu.ACC", "plgpu.wgmma"),
    summary="A WGMMA accumulator's shape (M, N) needs M % 64 == 0 and N % 8 == 0.",
    template="WGMMA requires m and n to be multiples of 64 and 8, got {m} and {n}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: WGMMAAccumulator.zero (Lane lowering of run_scoped); "
               "the mosaic_gpu.wgmma op verifier (Warpgroup)",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(13, 34),
    table_message="`WGMMA requires m and n to be multiples of 64 and 8, got {m} and {n}` (Lane); "
                  "`'mosaic_gpu.wgmma' op The accumulator's first dimension must be a multiple of 64, but got 32.` (Warpgroup)",
    semantics=("lane", "warpgroup"),
)

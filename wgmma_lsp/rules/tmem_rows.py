"""WG014 tmem-rows: a TMEM allocation whose rows are neither 128 nor 64."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG014",
    name="tmem-rows",
    apis=("plgpu.TMEM",),
    summary="TMEM refs have 128 rows (or 64, half the lanes).",
    template="Unsupported shape: {shape}. TMEM references must have either {TMEM_ROWS} or {TMEM_ROWS // 2} rows, "
             "but got {shape[0]}.",  # TMEM_ROWS = 128
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: _infer_tmem_layout (via core.infer_tmem_layout)",
    doc_file=doc_path(__file__),
    catalog_rows=(43,),
    table_message='`Unsupported shape: (256, 128). TMEM references must have either 128 or 64 rows, but got 256.`',
)

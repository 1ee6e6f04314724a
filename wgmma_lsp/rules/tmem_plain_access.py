"""WG077 tmem-plain-access: reading or writing a TMEM ref with `ref[...]`."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG077",
    name="tmem-plain-access",
    summary="TMEM refs are read with plgpu.async_load_tmem and written with plgpu.async_store_tmem.",
    template="Loads from TMEM are asynchronous operations and cannot be performed using the usual "
             "syntax. Please use plgpu.async_load_tmem instead.",
    table_message="`Loads from TMEM are asynchronous operations and cannot be performed using the usual "
                  "syntax. Please use plgpu.async_load_tmem instead.` (and `Stores to TMEM …`); Warpgroup: "
                  "`Expected the same number of in_tmem_layouts (0) as TMEM ref operands (1). op=…` (no kernel line)",
    exception="RuntimeError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _get_lowering_rule, _swap_lowering_rule (Lane); "
               "mosaic/gpu/layout_inference.py: _ensure_right_number_of_layouts (Warpgroup)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(55, 56),
)

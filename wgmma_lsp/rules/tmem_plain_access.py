"""WG077 tmem-plain-access: reading or writing a TMEM ref with `ref[...]` (Lane lowering)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG077",
    name="tmem-plain-access",
    summary="TMEM refs are read with plgpu.async_load_tmem and written with plgpu.async_store_tmem.",
    template="Loads from TMEM are asynchronous operations and cannot be performed using the usual "
             "syntax. Please use plgpu.async_load_tmem instead.",
    table_message="`Loads from TMEM are asynchronous operations and cannot be performed using the usual "
                  "syntax. Please use plgpu.async_load_tmem instead.` (and `Stores to TMEM …`)",
    exception="RuntimeError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _get_lowering_rule, _swap_lowering_rule",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(55, 56),
)

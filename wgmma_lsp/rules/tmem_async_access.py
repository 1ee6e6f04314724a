"""WG066 tmem-async-access: plgpu.async_load_tmem / async_store_tmem on a ref that is not in TMEM."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG066",
    name="tmem-async-access",
    apis=("plgpu.async_load_tmem", "plgpu.async_store_tmem"),
    summary="plgpu.async_load_tmem / async_store_tmem take TMEM refs only.",
    template="Async load only supports TMEM refs",
    table_message="`Async load only supports TMEM refs` / `Async store only supports TMEM refs`",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _async_load_tmem_abstract_eval, "
               "_async_store_tmem_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(53, 54),
)

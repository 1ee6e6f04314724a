"""WG012 tmem-transforms: TMEM refs cannot carry tiling/swizzle transforms."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "transforms are not supported for TMEM"

RULE = Rule(
    code="WG012",
    name="tmem-transforms",
    apis=("plgpu.TMEM",),
    summary="TMEM refs cannot carry tiling/swizzle transforms.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: MemorySpace.__call__",
    doc_file=doc_path(__file__),
    catalog_rows=(40,),
    table_message='`transforms are not supported for TMEM`',
)

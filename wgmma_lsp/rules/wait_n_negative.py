"""WG009 wait-n-negative: `plgpu.wgmma_accumulator_load(acc, wait_n=...)` with a negative count."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.base import doc_path

RULE = Rule(
    code="WG009",
    name="wait-n-negative",
    apis=("plgpu.wgmma_accumulator_load",),
    summary="wait_n counts in-flight WGMMAs to allow: it must be >= 0 (or None).",
    template="wait_n must be non-negative, got {wait_n=}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma_accumulator_load",
    doc_file=doc_path(__file__),
    catalog_rows=(5,),
    table_message='`wait_n must be non-negative, got wait_n=…`',
)

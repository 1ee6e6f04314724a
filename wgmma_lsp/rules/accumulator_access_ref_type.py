"""WG004 accumulator-access-ref-type: loading/storing an accumulator through a non-accumulator ref."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.base import doc_path
from wgmma_lsp.rules.wgmma_accumulator_ref_type import allocate_as_acc

RULE = Rule(
    code="WG004",
    name="accumulator-access-ref-type",
    apis=("plgpu.wgmma_accumulator_load", "plgpu.wgmma_accumulator_store"),
    summary="plgpu.wgmma_accumulator_load and the accumulator store need a WGMMA accumulator ref.",
    template="acc must be a WGMMAAccumulatorAbstractRef, got {acc.aval=}",
    exception="TypeError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma_accumulator_load, wgmma_accumulator_store",
    doc_file=doc_path(__file__),
    fixes=allocate_as_acc,
    catalog_rows=(6,),
    table_message='`acc must be a WGMMAAccumulatorAbstractRef, got {acc.aval=}`',
    fix_summary='allocate with `plgpu.ACC`',
)

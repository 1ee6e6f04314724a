"""WG029 accumulator-collective: a WGMMA accumulator allocated in a collective run_scoped."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = ("WGMMA accumulators can only be allocated non-collectively. Hint: remove collective_axes from "
           "run_scoped. If other allocations are performed as well, split the run_scoped into two.")

RULE = Rule(
    code="WG029",
    name="accumulator-collective",
    apis=("plgpu.ACC", "pl.run_scoped"),
    summary="plgpu.ACC lives in each warpgroup's registers: allocate it without collective_axes.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _run_scoped_lowering_rule",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(37,),
    semantics=("lane", "warpgroup"),
)

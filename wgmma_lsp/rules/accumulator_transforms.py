"""WG034 accumulator-transforms: a WGMMA accumulator viewed through a transpose (or any transform
other than indexing)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "WGMMA accumulator only supports indexing transforms"

RULE = Rule(
    code="WG034",
    name="accumulator-transforms",
    apis=("plgpu.wgmma",),
    summary="A WGMMA accumulator may only be sliced (acc_ref.at[...]), never transposed or reshaped.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering / _wgmma_warpgroup_lowering",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(31,),
    semantics=("lane", "warpgroup"),
)

"""WG054 find-swizzle-minor-dim: plgpu.find_swizzle on a minor dimension that is not 16-byte aligned."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG054",
    name="find-swizzle-minor-dim",
    apis=("plgpu.find_swizzle",),
    summary="plgpu.find_swizzle needs the minor dimension to be a multiple of 128 bits (16 bytes).",
    template="No valid out swizzle{what}: minor dimension has {minor_dim_bits} bits, which is not a "
             "multiple of 128 (16 bytes)",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/helpers.py: find_swizzle",
    stage="construct",
    doc_file=doc_path(__file__),
    catalog_rows=(107,),
)

"""WG063 swizzle-trailing-dim: a swizzle whose span is not the (tiled) buffer's minor dimension."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG063",
    name="swizzle-trailing-dim",
    apis=("plgpu.SwizzleTransform",),
    summary="SwizzleTransform(S) needs the minor dimension of the tiled buffer to be exactly S bytes.",
    template="Swizzle {self.swizzle} requires the trailing dimension to be of size {swizzle_elems}, "
             "but got shape: {x.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: SwizzleTransform.transform_type",
    doc_file=doc_path(__file__),
    catalog_rows=(90,),
)

"""WG064 tiling-divides: a TilingTransform whose tile does not divide the buffer (a bare assert in JAX)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG064",
    name="tiling-divides",
    apis=("plgpu.TilingTransform",),
    summary="TilingTransform((r, c)) needs the buffer's last dimensions to be multiples of (r, c).",
    # JAX raises a bare `AssertionError` (no message): this is the failing assert.
    template="assert all((d % t == 0 for d, t in zip(tiled_dims, self.tiling)))",
    exception="AssertionError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: TilingTransform.transform_type",
    doc_file=doc_path(__file__),
    catalog_rows=(91,),
    table_message="`TilingTransform({tiling}) does not divide the {shape} buffer: …` "
                  "(JAX: a bare `AssertionError`)",
)

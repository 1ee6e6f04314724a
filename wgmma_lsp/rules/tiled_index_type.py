"""WG099 tiled-index-type: an integer index on a tiled dimension of a tiled SMEM ref."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

#: JAX formats `type(idx)`: by lowering time an integer index is a traced scalar of this class
#: (jax/_src/interpreters/partial_eval.py, 0.10.2 and 0.12.0.1).
TRACED_INDEX = "<class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>"
MESSAGE = f"Unsupported index type: {TRACED_INDEX}"

RULE = Rule(
    code="WG099",
    name="tiled-index-type",
    apis=("plgpu.TilingTransform",),
    summary="An integer index on a tiled dimension of a tiled SMEM ref (only slices of whole tiles are allowed).",
    template="Unsupported index type: {type(idx)}",
    exception="TypeError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: UntilingTransform.commute_ndindexer",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(98,),
    table_message=f"`{MESSAGE}`",
)

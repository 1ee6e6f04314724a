"""WG061 index-multiple-ellipsis: An index with more than one Ellipsis."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Only one ellipsis is supported."

RULE = Rule(
    code="WG061",
    name="index-multiple-ellipsis",
    summary="An index with more than one Ellipsis.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/state/indexing.py: NDIndexer.from_indices_shape",
    doc_file=doc_path(__file__),
    catalog_rows=(87,),
)

"""WG059 index-too-many: More indices than the ref has dimensions."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path


RULE = Rule(
    code="WG059",
    name="index-too-many",
    summary="More indices than the ref has dimensions.",
    template="`indices` must not be longer than `shape`: indices={indices}, shape={shape}",
    exception="ValueError",
    jax_source="jax/_src/state/indexing.py: NDIndexer.from_indices_shape",
    doc_file=doc_path(__file__),
    catalog_rows=(85,),
)

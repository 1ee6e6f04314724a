"""WG058 store-ref-value: Storing a ref into a ref: the value needs loading with [...]."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?"

RULE = Rule(
    code="WG058",
    name="store-ref-value",
    summary="Storing a ref into a ref: the value needs loading with [...].",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/state/primitives.py: _swap_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(84,),
)

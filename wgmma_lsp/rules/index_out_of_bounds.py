"""WG060 index-out-of-bounds: A static slice (pl.ds, or a slice starting at or past the end) outside the ref's dimension."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path


RULE = Rule(
    code="WG060",
    name="index-out-of-bounds",
    summary="A static slice (pl.ds, or a slice starting at or past the end) outside the ref's dimension.",
    template="Out of bound slice: start={value}, size={size}, stride={idx.stride}, dim={s}.",
    exception="ValueError",
    jax_source="jax/_src/state/indexing.py: NDIndexer.__post_init__",
    doc_file=doc_path(__file__),
    catalog_rows=(86,),
    table_message="`Out of bound slice: start={value}, size={size}, stride={idx.stride}, dim={s}.` "
                  "(or `start={value}, dim={s}.`)",
)

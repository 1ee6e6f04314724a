"""WG056 store-shape: ref[idx] = value with a value whose shape differs from the indexed ref's."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path


RULE = Rule(
    code="WG056",
    name="store-shape",
    summary="ref[idx] = value with a value whose shape differs from the indexed ref's.",
    template="Invalid shape for `swap`. Ref shape: {ref_aval.shape}. Expected shape: {expected_out_ty.shape}. Value shape: {val_aval.shape}. Transforms: {transforms}. ",
    exception="ValueError",
    jax_source="jax/_src/state/primitives.py: _swap_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(83,),
)

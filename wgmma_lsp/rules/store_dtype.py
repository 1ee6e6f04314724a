"""WG057 store-dtype: ref[idx] = value with a value of another dtype (no implicit cast applies)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path


RULE = Rule(
    code="WG057",
    name="store-dtype",
    summary="ref[idx] = value with a value of another dtype (no implicit cast applies).",
    template="Invalid dtype for `swap`. Ref dtype: {expected_out_ty.dtype}. Value dtype: {val_aval.dtype}. ",
    exception="ValueError",
    jax_source="jax/_src/state/primitives.py: _swap_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(82,),
)

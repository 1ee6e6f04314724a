"""WG057 store-dtype: ref[idx] = value with a value of another dtype (no implicit cast applies)."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import method_call, replace, text_of


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Cast the stored value to the ref's dtype: `.astype(ref.dtype)` when the ref is a plain
    name (or attribute), the concrete `jnp.<dtype>` as the alternative (or the only fix when
    the ref is an expression). `data` (models/stores.py): value_span, ref_span, ref_dtype, jnp."""
    d = finding.data
    span, ref_span, dtype = d.get("value_span"), d.get("ref_span"), d.get("ref_dtype")
    if span is None or dtype is None:
        return []
    value = text_of(source, span)
    casts: list[str] = []
    if ref_span is not None:
        ref_text = text_of(source, ref_span).strip()
        try:
            simple = isinstance(ast.parse(ref_text, mode="eval").body, (ast.Name, ast.Attribute))
        except SyntaxError:
            simple = False
        if simple:
            casts.append(f"{ref_text}.dtype")
    if d.get("jnp"):
        casts.append(f"{d['jnp']}.{dtype}")
    return [replace(f"Cast to the ref's dtype ({dtype}): `.astype({c})`", span,
                    method_call(value, f"astype({c})"), preferred=i == 0)
            for i, c in enumerate(casts)]


RULE = Rule(
    code="WG057",
    name="store-dtype",
    summary="ref[idx] = value with a value of another dtype (no implicit cast applies).",
    template="Invalid dtype for `swap`. Ref dtype: {expected_out_ty.dtype}. Value dtype: {val_aval.dtype}. ",
    exception="ValueError",
    jax_source="jax/_src/state/primitives.py: _swap_abstract_eval",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(82,),
    fix_summary="cast to the ref's dtype (`.astype(ref.dtype)`)",
)

"""WG001 accumulator-dtype: a value of another dtype stored into a WGMMA accumulator."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule
from wgmma_lsp.rules.fixes_common import method_call, replace, text_of
from wgmma_lsp.rules.base import doc_path


def fixes(finding: Finding, source: str) -> list[Fix]:
    d = finding.data
    span = d.get("value_span")
    if span is None:
        return []
    acc_dtype = d["acc_dtype"]
    jnp = d.get("jnp")
    dtype_expr = f"{jnp}.{acc_dtype}" if jnp else f"{d.get('ref_text', 'acc_ref')}.dtype"
    value_text = text_of(source, span)
    out = [replace(f"Cast to the accumulator dtype ({acc_dtype})", span,
                   method_call(value_text, f"astype({dtype_expr})"), preferred=True)]
    recv = d.get("cast_receiver")
    if recv is not None:
        out.append(replace(f"Remove the cast to {d['value_dtype']}", span, text_of(source, recv)))
    return out


RULE = Rule(
    code="WG001",
    name="accumulator-dtype",
    summary="A value stored into a WGMMA accumulator must have the accumulator's dtype.",
    template="Accumulator dtype {inner.dtype} does not match value dtype {val.dtype}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_accumulator_store_abstract_eval",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(7,),
    table_message='`Accumulator dtype {inner.dtype} does not match value dtype {val.dtype}`',
    fix_summary='cast to the accumulator dtype; remove the cast',
)

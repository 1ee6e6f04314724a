"""WG002 accumulator-shape: a value of another shape stored into a WGMMA accumulator."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.rules.base import Finding, Rule
from wgmma_lsp.rules.fixes_common import method_call, replace, text_of
from wgmma_lsp.rules.base import doc_path


def fixes(finding: Finding, source: str) -> list[Fix]:
    d = finding.data
    span = d.get("value_span")
    if span is None:
        return []
    acc_shape, value_shape = d["acc_shape"], d["value_shape"]
    out: list[Fix] = []
    operand = d.get("operand_shapes")
    if operand is not None and D.shapes_equal(operand[1], acc_shape) is True:
        out.append(replace("Remove the reshape/transpose that changed the shape", span,
                           text_of(source, operand[0]), preferred=True))
    size_acc: D.Dim = 1
    size_val: D.Dim = 1
    for x in acc_shape:
        size_acc = D.mul(size_acc, x)
    for x in value_shape:
        size_val = D.mul(size_val, x)
    if D.equal(size_acc, size_val) is True:
        dims = ", ".join(str(x) for x in acc_shape)
        out.append(replace(f"Reshape back to the accumulator shape {D.format_shape(acc_shape)}", span,
                           method_call(text_of(source, span), f"reshape({dims})"),
                           preferred=not out))
    jnp = d.get("jnp")
    if jnp and _broadcastable(value_shape, acc_shape):
        dims = ", ".join(str(x) for x in acc_shape)
        out.append(replace(f"Broadcast to the accumulator shape {D.format_shape(acc_shape)}", span,
                           f"{jnp}.broadcast_to({text_of(source, span)}, ({dims}))",
                           preferred=not out))
    return out


def _broadcastable(src: tuple, dst: tuple) -> bool:
    if len(src) > len(dst):
        return False
    for a, b in zip(reversed(src), reversed(dst)):
        if not (D.equal(a, 1) is True or D.equal(a, b) is True):
            return False
    return True


RULE = Rule(
    code="WG002",
    name="accumulator-shape",
    summary="A value stored into a WGMMA accumulator must have the accumulator's shape.",
    template="Accumulator shape {inner.shape} does not match value shape {val.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_accumulator_store_abstract_eval",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(8,),
    table_message='`Accumulator shape {inner.shape} does not match value shape {val.shape}`',
    fix_summary='remove the reshape/transpose; reshape back; broadcast',
)

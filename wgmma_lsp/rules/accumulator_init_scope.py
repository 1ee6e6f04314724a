"""WG007 accumulator-init-scope: `plgpu.ACC.init(x)` given to `pl.run_scoped`."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import text_of

MESSAGE = "Preinitialized WGMMAAccumulatorRef only supported in pl.run_state."

def fixes(finding: Finding, source: str) -> list[Fix]:
    """`pl.run_scoped(body, plgpu.ACC.init(x))` -> `pl.run_state(body)(plgpu.ACC.init(x))`: the
    scope that takes initial values (it returns the accumulator's final value)."""
    span = finding.data.get("run_scoped_span")
    if span is None:
        return []
    text = text_of(source, span)
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 2 \
            or not isinstance(node.func, ast.Attribute) or node.func.attr != "run_scoped":
        return []
    mod = ast.get_source_segment(text, node.func.value)
    body = ast.get_source_segment(text, node.args[0])
    init = ast.get_source_segment(text, node.args[1])
    return [Fix("Initialise the accumulator in pl.run_state", (TextEdit(span, f"{mod}.run_state({body})({init})"),),
                True)]


RULE = Rule(
    code="WG007",
    name="accumulator-init-scope",
    apis=("plgpu.ACC", "pl.run_scoped"),
    summary="plgpu.ACC.init(x) is only valid in pl.run_state, not in pl.run_scoped.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: WGMMAAccumulatorRef.get_ref_aval",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(10,),
    fix_summary="`pl.run_state(body)(plgpu.ACC.init(x))`",
    table_message='`Preinitialized WGMMAAccumulatorRef only supported in pl.run_state.`',
)

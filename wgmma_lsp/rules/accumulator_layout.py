"""WG027 accumulator-layout: a value stored into (or initialising) a WGMMA accumulator that is
not in the WGMMA register layout (Lane lowering)."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import text_of

MESSAGE = "Only WGMMA layouts supported in WGMMAAccumulator"


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Wrap the value in `plgpu.layout_cast(value, plgpu.Layout.WGMMA)`."""
    d = finding.data
    span, plgpu = d.get("value_span"), d.get("plgpu")
    if span is None or not plgpu:
        return []
    text = text_of(source, span)
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return []
    return [Fix("Give the value the WGMMA layout (plgpu.layout_cast)",
                (TextEdit(span, f"{plgpu}.layout_cast({text}, {plgpu}.Layout.WGMMA)"),), True)]


RULE = Rule(
    code="WG027",
    name="accumulator-layout",
    summary="Under Lane semantics values written to a WGMMA accumulator must have the WGMMA layout.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/wgmma.py: WGMMAAccumulator.from_registers "
               "(Lane lowering of accumulator stores and run_state)",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(11, 12),
    fix_summary="`plgpu.layout_cast(x, plgpu.Layout.WGMMA)`",
    semantics=("lane",),
)

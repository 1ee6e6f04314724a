"""WG015 memory-space-arguments: packed=, collective= and layout= are TMEM-only arguments."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, replace, text_of

TMEM_ONLY = ("packed", "collective", "layout")

MESSAGE = "packed, collective and layout arguments are only supported for TMEM."

def fixes(finding: Finding, source: str) -> list[Fix]:
    """Remove the TMEM-only arguments from the SMEM/GMEM allocation."""
    span = finding.span
    parsed = parse_call(text_of(source, span))
    if parsed is None:
        return []
    node, text = parsed
    if any(k.arg is None for k in node.keywords):
        return []
    parts = [ast.get_source_segment(text, a) or "" for a in node.args]
    parts += [f"{k.arg}={ast.get_source_segment(text, k.value)}" for k in node.keywords
              if k.arg not in TMEM_ONLY]
    func = ast.get_source_segment(text, node.func)
    return [replace("Remove the TMEM-only arguments", span, f"{func}({', '.join(parts)})", preferred=True)]


RULE = Rule(
    code="WG015",
    name="memory-space-arguments",
    apis=("plgpu.SMEM", "plgpu.GMEM"),
    summary="packed=, collective= and layout= are TMEM-only arguments.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: MemorySpace.__call__",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(42,),
    table_message='`packed, collective and layout arguments are only supported for TMEM.`',
    fix_summary='remove them',
)

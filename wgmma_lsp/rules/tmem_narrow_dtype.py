"""WG013 tmem-narrow-dtype: A TMEM ref narrower than 32 bits needs packed= or an explicit layout."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, replace, text_of

MESSAGE = "dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout"

def fixes(finding: Finding, source: str) -> list[Fix]:
    """Pack the narrow dtype: `plgpu.TMEM(shape, dtype, packed=True)`."""
    span = finding.data.get("call_span")
    parsed = parse_call(text_of(source, span)) if span is not None else None
    if parsed is None or any(k.arg in ("packed", "layout") for k in parsed[0].keywords):
        return []
    text = parsed[1]
    return [replace("Pack it: packed=True", span, text[:-1].rstrip().rstrip(",") + ", packed=True)",
                    preferred=True)]


RULE = Rule(
    code="WG013",
    name="tmem-narrow-dtype",
    apis=("plgpu.TMEM",),
    summary="A TMEM ref narrower than 32 bits needs packed= or an explicit layout.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: MemorySpace.__call__",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(41,),
    table_message='`dtypes narrower than 32-bit require either the packed argument or an explicit TMEM layout`',
    fix_summary='`packed=True`',
)

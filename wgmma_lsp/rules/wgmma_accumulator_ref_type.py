"""WG003 wgmma-accumulator-ref-type: `plgpu.wgmma`'s first argument is not a WGMMA accumulator."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, text_of


def reallocate(finding: Finding, source: str, target: str, title: str) -> list[Fix]:
    """Rewrite `X.SMEM(shape, dtype)` (or GMEM) at the allocation site to `X.<target>(shape, dtype)`."""
    d = finding.data
    span = d.get("alloc_span")
    if span is None or d.get("alloc_kind") not in ("smem", "gmem"):
        return []
    parsed = parse_call(text_of(source, span))
    if parsed is None:
        return []
    node, text = parsed
    if not isinstance(node.func, ast.Attribute) or node.func.attr not in ("SMEM", "GMEM") \
            or node.keywords or not (1 <= len(node.args) <= 2):
        return []
    owner = ast.get_source_segment(text, node.func.value)
    args = ", ".join(ast.get_source_segment(text, a) or "" for a in node.args)
    new = f"{owner}.{target}({args})"
    return [Fix(f"{title}: {new}", (TextEdit(span, new),), True)]


def allocate_as_acc(finding: Finding, source: str) -> list[Fix]:
    return reallocate(finding, source, "ACC", "Allocate it as a WGMMA accumulator")


RULE = Rule(
    code="WG003",
    name="wgmma-accumulator-ref-type",
    apis=("plgpu.wgmma",),
    summary="plgpu.wgmma needs a WGMMA accumulator ref (plgpu.ACC) as its first argument.",
    template="Expected WGMMAAbstractAccumulatorRef got {acc_aval}",
    exception="TypeError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_ref_effectful_abstract_eval",
    doc_file=doc_path(__file__),
    fixes=allocate_as_acc,
    catalog_rows=(3, 4),
    table_message='`Expected WGMMAAbstractAccumulatorRef got {acc_aval}`',
    fix_summary='allocate with `plgpu.ACC`',
)

"""Inlay hints: the aval of each array or ref bound by an assignment inside a function."""

from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide.hover import describe
from wgmma_lsp.ide.model import InlayHint
from wgmma_lsp.interpret.values import ArrayVal, RefVal
from wgmma_lsp.spans import Span


def inlay_hints(analysis: Analysis, span: Span) -> list[InlayHint]:
    out: list[InlayHint] = []
    for s, rec in analysis.records.items():
        if rec.kind != "store" or not (span.line <= s.line <= span.end_line):
            continue
        vals = [v for v in rec.values if isinstance(v, (ArrayVal, RefVal))]
        if len(vals) != 1 or len(rec.values) != 1:
            continue
        label = describe(vals[0])
        if not label or "?" in label:
            continue
        out.append(InlayHint(s.end_line, s.end_col, f": {label}"))
    out.sort(key=lambda h: (h.line, h.col))
    return out

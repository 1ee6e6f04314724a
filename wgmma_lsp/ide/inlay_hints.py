"""Inlay hints: the aval of each array or ref bound by an assignment inside a function.

Sizes print by the names the user wrote when no concrete context reached the line; with
concrete contexts (an entry point, a sweep), their values, each context named in the tooltip
(`float32[128,64] | float32[256,64]`)."""

from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide.hover import describe
from wgmma_lsp.ide.model import InlayHint
from wgmma_lsp.interpret.values import ArrayVal, RefVal
from wgmma_lsp.spans import Span

MAX_CONTEXT_VALUES = 3


def inlay_hints(analysis: Analysis, span: Span) -> list[InlayHint]:
    out: list[InlayHint] = []
    for s, rec in analysis.records.items():
        if rec.kind != "store" or not (span.line <= s.line <= span.end_line):
            continue
        vals = [v for v in rec.values if isinstance(v, (ArrayVal, RefVal))]
        if not vals or len(vals) != len(rec.values) or len(vals) > MAX_CONTEXT_VALUES:
            continue
        labels: list[str] = []
        tips: list[str] = []
        for i, v in enumerate(vals):
            label = describe(v)
            if not label or "?" in label:
                break
            ctx = rec.contexts[i] if i < len(rec.contexts) else None
            if label not in labels:
                labels.append(label)
            if ctx:
                tips.append(f"{label} ({ctx})")
        else:
            if len(labels) > 1 and len(tips) < len(vals):
                continue  # several values, not all from named contexts: the hover explains
            out.append(InlayHint(s.end_line, s.end_col, ": " + " | ".join(labels), "\n".join(tips)))
    out.sort(key=lambda h: (h.line, h.col))
    return out

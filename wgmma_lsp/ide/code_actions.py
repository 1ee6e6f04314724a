from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide import suppressions
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Diagnostic, Fix
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span


def code_actions(analysis: Analysis, settings: Settings, span: Span) -> list[tuple[Diagnostic, Fix]]:
    """The fixes of every diagnostic overlapping `span`, preferred ones first, and last for each
    a suppression comment that silences it."""
    out = []
    for d in diagnostics(analysis, settings):
        if d.span.overlaps(span) or d.span.line <= span.line <= d.span.end_line:
            for fix in sorted(d.fixes, key=lambda f: not f.preferred):
                out.append((d, fix))
            silence = suppressions.add(d, analysis.source)
            if silence is not None:
                out.append((d, silence))
    return out

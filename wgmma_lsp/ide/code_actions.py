from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.entry.declared import parse_entry_points
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
    return out + trace_comment_actions(analysis, settings, span)


def trace_comment_actions(analysis: Analysis, settings: Settings, span: Span) -> list[tuple[Diagnostic, Fix]]:
    """"Add a wgmma-lsp trace comment" on the `def` line of a kernel checked without concrete
    shapes, or of the function that launches it: a `# wgmma-lsp: trace f(a=..., b=...)` line
    above that function, one `...` per required parameter (WG906; see kernel_reach.py)."""
    from wgmma_lsp.ide.model import Severity, TextEdit
    from wgmma_lsp.interpret.kernel_reach import trace_comment
    from wgmma_lsp.rules.tool_codes import KERNEL_WITHOUT_SHAPES as rule

    if not settings.rule_enabled(rule.code, rule.name):
        return []
    lines = analysis.source.splitlines()
    out = []
    declared = {e.call.split("(", 1)[0].strip() for e in parse_entry_points(analysis.source)}
    for k in getattr(analysis, "kernels", []):
        entry = k.entry
        if k.concrete or entry is None or entry.name in declared:
            continue
        if not (span.line <= k.span.line <= span.end_line or span.line <= entry.def_line <= span.end_line):
            continue
        at = entry.insert_line
        indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())] if at < len(lines) else ""
        text = (f"{indent}# Example arguments for wgmma-lsp: replace each ... (see docs/trace-mode.md)\n"
                f"{indent}{trace_comment(entry)}\n")
        where = k.span if span.line <= k.span.line <= span.end_line else Span(entry.def_line, 0, entry.def_line, 0)
        d = Diagnostic(code=rule.code, name=rule.name, span=where,
                       message=rule.template.format(kernel=k.name, entry=entry.name),
                       severity=settings.severity_for(rule.code, rule.name, Severity.INFORMATION),
                       doc_uri=rule.doc_uri)
        out.append((d, Fix("Add a wgmma-lsp trace comment", (TextEdit(Span(at, 0, at, 0), text),))))
    return out

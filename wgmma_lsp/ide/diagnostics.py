"""Findings to diagnostics: rule selection, severities, documentation links, fixes."""

from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide import suppressions
from wgmma_lsp.ide.model import Diagnostic, RelatedInfo, Severity
from wgmma_lsp.settings import Settings

NOTE_CODE = "WG903"  # tool-level: what the analysis budget left unchecked (a sweep cut short)
INCOMPLETE_CODE = "WG904"  # tool-level: where the analysis stopped short (never a silent pass)


def diagnostics(analysis: Analysis, settings: Settings | None = None,
                extra: list[Diagnostic] | None = None) -> list[Diagnostic]:
    """The analysis' findings as diagnostics (cached on the analysis, per settings), with
    `extra` ones (trace mode's, the checker's own) merged in, minus those a
    `# wgmma-lsp: ignore` comment silences (plus WG902 for the comments that silence nothing)."""
    settings = settings or Settings()
    key = repr(settings)
    cache = analysis.cache.setdefault("diagnostics", {})
    if key not in cache:
        cache.clear()  # one settings value at a time
        cache[key] = _diagnostics(analysis, settings)
    out = list(cache[key])
    if extra:
        out = merge(out, extra)
    out = suppressions.apply(out, analysis.source, settings)
    out.sort(key=lambda d: (d.span.line, d.span.col, d.code))
    return out


def _diagnostics(analysis: Analysis, settings: Settings) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: set[tuple] = set()
    for f in analysis.findings:
        rule = f.rule
        if not settings.rule_enabled(rule.code, rule.name) or f.key in seen:
            continue
        seen.add(f.key)
        default = Severity.ERROR if f.certain and rule.stage not in ("deprecation", "hazard") else Severity.WARNING
        message = f.message + f.context_note
        if f.condition:
            message = f"{message} (differs unless {f.condition})"
        elif not f.certain:
            message = f"{message} (on some paths)"
        doc_uri = (f"{settings.docs_base_url}/{rule.code}" if settings.docs_base_url
                   else (rule.doc_uri if rule.doc_file else None))
        fixes = rule.fixes(f, analysis.source) if rule.fixes else []
        out.append(Diagnostic(
            code=rule.code, name=rule.name, message=message, span=f.span,
            severity=settings.severity_for(rule.code, rule.name, default),
            doc_uri=doc_uri,
            related=[RelatedInfo(r.span, r.message, _file_uri(r.path) if r.path else None)
                     for r in f.related],
            fixes=fixes,
        ))
    if settings.rule_enabled(NOTE_CODE, "analysis-budget"):
        for span, note in analysis.notes:
            out.append(Diagnostic(code=NOTE_CODE, name="analysis-budget", message=note, span=span,
                                  severity=settings.severity_for(NOTE_CODE, "analysis-budget",
                                                                 Severity.INFORMATION)))
    out.extend(incomplete_diagnostics(analysis, settings))
    out.sort(key=lambda d: (d.span.line, d.span.col, d.code))
    return out


def incomplete_diagnostics(analysis: Analysis, settings: Settings) -> list[Diagnostic]:
    """WG904 where the analysis stopped short (interpret/incomplete.py): information."""
    if not settings.rule_enabled(INCOMPLETE_CODE, "analysis-incomplete"):
        return []
    from wgmma_lsp.rules.tool_codes import ANALYSIS_INCOMPLETE as rule

    doc_uri = f"{settings.docs_base_url}/{rule.code}" if settings.docs_base_url else rule.doc_uri
    return [Diagnostic(code=rule.code, name=rule.name, message=stop.message, span=stop.span,
                       severity=settings.severity_for(rule.code, rule.name, Severity.INFORMATION),
                       doc_uri=doc_uri)
            for stop in analysis.incomplete]


def _file_uri(path: str) -> str:
    from pathlib import Path

    return Path(path).resolve().as_uri()


def merge(static: list[Diagnostic], other: list[Diagnostic]) -> list[Diagnostic]:
    """Static diagnostics plus others (e.g. trace mode's), the same error on the same line once
    (the same message, or the same rule code)."""
    by_message = {(d.span.line, d.message) for d in static}
    by_code = {(d.span.line, d.code) for d in static}
    return static + [d for d in other
                     if (d.span.line, d.message) not in by_message and (d.span.line, d.code) not in by_code]


SYNTAX_ERROR_CODE = "WG900"


def syntax_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    """The file's syntax errors (each broken region once, at CPython's position and message).

    The language server shows them only when asked (`syntaxErrors: true`): a Python language
    server next to it usually shows them already. The CLI always reports them."""
    return [Diagnostic(code=SYNTAX_ERROR_CODE, name="syntax-error", message=f"SyntaxError: {msg}",
                       span=span, severity=Severity.ERROR)
            for span, msg in analysis.syntax_errors]

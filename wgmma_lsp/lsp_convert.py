"""Server results to lsprotocol: ranges in the client's position units, diagnostics."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.workspace import TextDocument

from wgmma_lsp.ide.model import Diagnostic
from wgmma_lsp.ide.signature_help import SignatureHelpInfo
from wgmma_lsp.spans import Span


def to_range(span: Span, doc: TextDocument | None = None) -> lsp.Range:
    if doc is not None and span.line < len(doc.lines) and span.end_line < len(doc.lines):
        span = _convert_span_in(doc, span)
    return lsp.Range(lsp.Position(span.line, span.col), lsp.Position(span.end_line, span.end_col))


def to_lsp_diagnostic(d: Diagnostic, uri: str, doc: TextDocument | None = None) -> lsp.Diagnostic:
    related = [lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=r.uri or uri, range=to_range(r.span, doc if r.uri in (None, uri) else None)),
        message=r.message)
        for r in d.related] or None
    return lsp.Diagnostic(
        range=to_range(d.span, doc),
        message=d.message,
        severity=lsp.DiagnosticSeverity(int(d.severity)),
        code=d.code,
        code_description=lsp.CodeDescription(href=d.doc_uri) if d.doc_uri else None,
        source=d.source,
        related_information=related,
        data={"code": d.code},
    )


def to_lsp_signature_help(info: SignatureHelpInfo) -> lsp.SignatureHelp:
    return lsp.SignatureHelp(
        signatures=[lsp.SignatureInformation(
            label=info.label,
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=info.documentation),
            parameters=[lsp.ParameterInformation(label=(a, b)) for a, b in info.parameters])],
        active_signature=0, active_parameter=info.active_parameter)


def _convert_span_in(doc: TextDocument, span: Span) -> Span:
    """Server spans count code points; the client may count UTF-16 units."""
    codec = doc.position_codec
    lines = doc.lines
    rng = codec.range_to_client_units(lines, lsp.Range(lsp.Position(span.line, span.col),
                                                       lsp.Position(span.end_line, span.end_col)))
    return Span(rng.start.line, rng.start.character, rng.end.line, rng.end.character)

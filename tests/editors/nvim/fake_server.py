"""A stand-in for wgmma-lsp that answers exactly what the e2e harness expects for
examples/seed_errors.py. It tests the harness (and the push/pull handling of each Neovim) on its
own, so a failure of the real e2e test points at the server, not at the harness.

Like the real server, it pushes diagnostics unless the client declares pull diagnostics.
"""

from __future__ import annotations

import os
import re

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

FIX = "half.astype(jnp.float32)"
server = LanguageServer("wgmma-lsp-fake", "0")
state = {"pull": False}


def _diag(line: int, col: int, end: int, code: str, message: str) -> lsp.Diagnostic:
    return lsp.Diagnostic(range=lsp.Range(lsp.Position(line, col), lsp.Position(line, end)),
                          message=message, severity=lsp.DiagnosticSeverity.Error, code=code,
                          source="wgmma-lsp", data={"code": code})


def _wg001(lines: list[str]) -> lsp.Diagnostic | None:
    m = re.search(r"= (half)\b(?!\.astype)", lines[22]) if len(lines) > 22 else None
    if not m:
        return None
    return _diag(22, m.start(1), m.end(1), "WG001",
                 "Accumulator dtype float32 does not match value dtype bfloat16")


def diagnostics(uri: str) -> list[lsp.Diagnostic]:
    lines = server.workspace.get_text_document(uri).source.splitlines()
    out = [d for d in [_wg001(lines)] if d]
    if len(lines) > 42:
        out.append(_diag(34, 4, 34, "WG002",
                         "Accumulator shape (64, 128) does not match value shape (128, 64)"))
        out[-1].range.end.character = len(lines[34].split("#")[0].rstrip())
        out.append(_diag(42, 16, 23, "WG003",
                         "Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}"))
    return out


def publish(uri: str) -> None:
    # FAKE_WGMMA_ALWAYS_PUSH=1 simulates a server bug (push *and* pull) for the negative test.
    if not state["pull"] or os.environ.get("FAKE_WGMMA_ALWAYS_PUSH"):
        server.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics(uri)))


@server.feature(lsp.INITIALIZE)
def initialize(ls: LanguageServer, params: lsp.InitializeParams) -> None:
    td = params.capabilities.text_document
    state["pull"] = bool(td and td.diagnostic)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    publish(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    publish(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
    identifier="wgmma-lsp", inter_file_dependencies=False, workspace_diagnostics=False))
def pull(ls: LanguageServer, params: lsp.DocumentDiagnosticParams):
    return lsp.RelatedFullDocumentDiagnosticReport(items=diagnostics(params.text_document.uri))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    if params.position.line != 22:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(
        kind=lsp.MarkupKind.Markdown, value="```\nacc_ref: Accumulator{float32[64,128]}\n```"))


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: LanguageServer, params: lsp.CodeActionParams):
    uri = params.text_document.uri
    d = _wg001(ls.workspace.get_text_document(uri).source.splitlines())
    if d is None or params.range.start.line != 22:
        return []
    return [lsp.CodeAction(title="Cast to the accumulator dtype (float32)",
                           kind=lsp.CodeActionKind.QuickFix, is_preferred=True, diagnostics=[d],
                           edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(d.range, FIX)]}))]


if __name__ == "__main__":
    server.start_io()

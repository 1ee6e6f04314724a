"""The real server over stdio, driven by pytest-lsp as an editor would drive it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "seed_errors.py"
SEED_MESSAGES = {
    22: ("WG001", "Accumulator dtype float32 does not match value dtype bfloat16"),
    34: ("WG002", "Accumulator shape (64, 128) does not match value shape (128, 64)"),
    42: ("WG003", "Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}"),
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "wgmma_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, pull: bool = False) -> None:
    caps = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            diagnostic=lsp.DiagnosticClientCapabilities() if pull else None))
    await client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=ROOT.as_uri()))


def open_doc(client: LanguageClient, text: str, name: str = "kernel.py", version: int = 1) -> str:
    uri = (ROOT / "examples" / name).as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri


async def wait_for_diagnostics(client: LanguageClient, uri: str, count: int | None = None,
                               timeout: float = 15.0) -> list[lsp.Diagnostic]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        diags = client.diagnostics.get(uri)
        if diags is not None and (count is None or len(diags) == count):
            return diags
        assert loop.time() < deadline, f"no diagnostics (have {diags})"
        await asyncio.sleep(0.05)


async def test_open_publishes_the_seed_errors(client: LanguageClient) -> None:
    await start(client)
    uri = open_doc(client, EXAMPLE.read_text(), "seed_errors.py")
    diags = await wait_for_diagnostics(client, uri, 3)
    got = {d.range.start.line: (d.code, d.message) for d in diags}
    assert got == SEED_MESSAGES
    for d in diags:
        assert d.severity == lsp.DiagnosticSeverity.Error
        assert d.source == "wgmma-lsp"
        assert d.code_description is not None and d.code_description.href.endswith(".md")
        assert d.related_information and "allocated here" in d.related_information[0].message
    first = next(d for d in diags if d.code == "WG001")
    line = EXAMPLE.read_text().splitlines()[22]
    assert line[first.range.start.character:first.range.end.character] == "half"


async def test_pull_clients_are_not_pushed_to(client: LanguageClient) -> None:
    await start(client, pull=True)
    uri = open_doc(client, EXAMPLE.read_text(), "seed_errors.py")
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri)))
    assert {d.range.start.line for d in report.items} == set(SEED_MESSAGES)
    await asyncio.sleep(0.5)
    assert uri not in client.diagnostics  # shown once: pulled, never pushed


async def test_hover_shows_the_accumulator_aval(client: LanguageClient) -> None:
    await start(client)
    uri = open_doc(client, EXAMPLE.read_text(), "seed_errors.py")
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(22, 6)))
    assert hover is not None
    assert "Accumulator{float32[64,128]}" in hover.contents.value
    assert "allocated at line 26" in hover.contents.value
    on_error = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(22, 20)))
    assert "bfloat16[64,128]" in on_error.contents.value and "WG001" in on_error.contents.value


async def test_code_action_then_edit_clears_the_diagnostic(client: LanguageClient) -> None:
    await start(client)
    text = EXAMPLE.read_text()
    uri = open_doc(client, text, "seed_errors.py")
    diags = await wait_for_diagnostics(client, uri, 3)
    target = next(d for d in diags if d.code == "WG001")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), target.range, lsp.CodeActionContext(diagnostics=[target])))
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1 and preferred[0].title == "Cast to the accumulator dtype (float32)"
    edits = preferred[0].edit.changes[uri]
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits]))
    diags = await wait_for_diagnostics(client, uri, 2)
    assert {d.code for d in diags} == {"WG002", "WG003"}


async def test_incremental_changes_reanalyse(client: LanguageClient) -> None:
    await start(client)
    text = EXAMPLE.read_text()
    uri = open_doc(client, text, "seed_errors.py")
    await wait_for_diagnostics(client, uri, 3)
    # Type the error away one keystroke at a time: `half` -> `half.astype(jnp.float32)`.
    line = 22
    col = text.splitlines()[line].index("half") + len("half")
    for version, ch in enumerate(".astype(jnp.float32)", start=2):
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col)), text=ch)]))
        col += 1
    diags = await wait_for_diagnostics(client, uri, 2)
    assert all(d.code != "WG001" for d in diags)


async def test_a_file_that_does_not_parse(client: LanguageClient) -> None:
    await start(client)
    broken = EXAMPLE.read_text().replace("def matmul(kernel, a, b):", "def matmul(kernel, a, b:\n  x = (", 1)
    uri = open_doc(client, broken, "broken.py")
    diags = await wait_for_diagnostics(client, uri)
    # The kernels above the broken line still parse and still get their diagnostics.
    assert {d.code for d in diags} <= {"WG001", "WG002", "WG003"}
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(22, 6)))
    assert hover is not None and "Accumulator{float32[64,128]}" in hover.contents.value


async def test_requests_for_unopened_documents_and_odd_positions(client: LanguageClient) -> None:
    await start(client)
    ghost = lsp.TextDocumentIdentifier((ROOT / "never_opened.py").as_uri())
    assert await client.text_document_hover_async(lsp.HoverParams(ghost, lsp.Position(0, 0))) is None
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        ghost, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)), lsp.CodeActionContext(diagnostics=[])))
    assert not actions
    uri = open_doc(client, "x = 1\n", "tiny.py")
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(500, 500)))
    assert hover is None
    # Odd text: non-ASCII identifiers before the error shift UTF-16 columns.
    text = EXAMPLE.read_text().replace("half = acc_ref", "hälf𝛼 = acc_ref").replace("= half  #", "= hälf𝛼  #")
    uri2 = open_doc(client, text, "unicode.py")
    diags = await wait_for_diagnostics(client, uri2, 3)
    d = next(d for d in diags if d.code == "WG001")
    assert d.range.end.character - d.range.start.character == len("hälf𝛼".encode("utf-16-le")) // 2


async def test_inlay_hints_and_explain_command(client: LanguageClient) -> None:
    await start(client)
    uri = open_doc(client, EXAMPLE.read_text(), "seed_errors.py")
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(80, 0))))
    assert any(h.label == ": bfloat16[64,128]" and h.position.line == 21 for h in hints)
    result = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="wgmma-lsp.explain", arguments=["WG001"]))
    assert result["code"] == "WG001" and "accumulator" in result["markdown"].lower()

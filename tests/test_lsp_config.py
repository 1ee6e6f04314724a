"""The server reads the project configuration of each document, with the editor's settings on top."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).parent.parent
BAD = (ROOT / "examples" / "seed_errors.py").read_text()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "wgmma_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def diagnostics(client: LanguageClient, uri: str, count: int) -> list[lsp.Diagnostic]:
    for _ in range(300):
        got = client.diagnostics.get(uri)
        if got is not None and len(got) == count:
            return got
        await asyncio.sleep(0.05)
    raise AssertionError(f"expected {count} diagnostics, have {client.diagnostics.get(uri)}")


async def test_pyproject_configuration_applies_in_the_editor(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.wgmma-lsp]\nignore = ['WG003']\nseverity = { WG002 = 'warning' }\n")
    (tmp_path / "k.py").write_text(BAD)
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    uri = (tmp_path / "k.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=BAD)))
    diags = await diagnostics(client, uri, 2)
    assert {(d.code, d.severity) for d in diags} == {
        ("WG001", lsp.DiagnosticSeverity.Error), ("WG002", lsp.DiagnosticSeverity.Warning)}
    # the editor's settings apply on top: ignore WG001 too
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"wgmmaLsp": {"rules": {"ignore": ["WG001"]}}}))
    diags = await diagnostics(client, uri, 1)
    assert [d.code for d in diags] == ["WG002"]


async def test_suppression_comments_in_the_editor(client: LanguageClient, tmp_path: Path) -> None:
    lines = BAD.splitlines()
    lines[34] += "  # wgmma-lsp: ignore[WG002]"
    text = "\n".join(lines) + "\n"
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    uri = (tmp_path / "k.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    diags = await diagnostics(client, uri, 2)
    assert sorted(d.code for d in diags) == ["WG001", "WG003"]
    wg001 = next(d for d in diags if d.code == "WG001")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri), range=wg001.range,
        context=lsp.CodeActionContext(diagnostics=[wg001])))
    silence = [a for a in actions if a.title == "Suppress WG001 on this line"]
    assert silence and silence[0].edit is not None
    (edit,) = silence[0].edit.changes[uri]
    assert edit.new_text == "  # wgmma-lsp: ignore[WG001]" and edit.range.start.line == 22


async def test_hover_honours_the_project_configuration(client: LanguageClient, tmp_path: Path) -> None:
    """A rule ignored in `[tool.wgmma-lsp]` is neither published nor shown in a hover."""
    (tmp_path / "pyproject.toml").write_text("[tool.wgmma-lsp]\nignore = ['WG003']\n")
    (tmp_path / "k.py").write_text(BAD)
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    uri = (tmp_path / "k.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=BAD)))
    diags = await diagnostics(client, uri, 2)
    assert sorted(d.code for d in diags) == ["WG001", "WG002"]
    line = next(i for i, ln in enumerate(BAD.splitlines()) if "error: acc_ref is not a WGMMA" in ln)
    col = BAD.splitlines()[line].index("acc_ref")

    async def hover_at(l: int, c: int) -> str:
        got = await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri), position=lsp.Position(l, c)))
        assert got is not None and isinstance(got.contents, lsp.MarkupContent)
        return got.contents.value

    assert "Ref<smem>" in (value := await hover_at(line, col)) and "WG003" not in value
    wg001 = next(d for d in diags if d.code == "WG001")
    assert "WG001" in await hover_at(wg001.range.start.line, wg001.range.start.character)

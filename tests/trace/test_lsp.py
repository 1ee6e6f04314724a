"""Through the language server: static mode never runs user code; trace mode reports JAX's verdict."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from wgmma_lsp.trace.report import SOURCE

from .conftest import FIXTURES, expected_errors


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "wgmma_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def _start(client: LanguageClient, root: Path, options: dict | None) -> None:
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),  # push diagnostics, no workspace/configuration
        root_uri=root.as_uri(), initialization_options=options))


def _open(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text())))
    return uri


async def _wait_for(predicate, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.1)


def test_static_analysis_never_executes_the_module(tmp_path: Path) -> None:
    from wgmma_lsp.analysis import analyze

    module = tmp_path / "marker_module.py"
    shutil.copy(FIXTURES / "marker_module.py", module)
    analyze(module.read_text(), str(module))
    assert not (tmp_path / "imported.marker").exists()


async def test_server_with_trace_disabled_never_executes_the_module(
        client: LanguageClient, tmp_path: Path) -> None:
    module = tmp_path / "marker_module.py"
    shutil.copy(FIXTURES / "marker_module.py", module)
    await _start(client, tmp_path, None)  # trace mode is off by default
    uri = _open(client, module)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(10, 5)))
    await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(12, 0))))
    await asyncio.sleep(1.0)
    assert not (tmp_path / "imported.marker").exists()


async def test_trace_mode_end_to_end(client: LanguageClient, tmp_path: Path) -> None:
    module = tmp_path / "lowering_kernels.py"
    shutil.copy(FIXTURES / "lowering_kernels.py", module)
    await _start(client, tmp_path, {"trace": {"enabled": True, "timeout": 60}})
    uri = _open(client, module)
    expected = expected_errors(module)

    def trace_diags() -> list[lsp.Diagnostic]:
        return [d for d in client.diagnostics.get(uri, []) if d.source == SOURCE]

    def static_lines() -> set[int]:
        return {d.range.start.line for d in client.diagnostics.get(uri, []) if d.source != SOURCE}

    def settled() -> bool:
        have = {d.range.start.line for d in client.diagnostics.get(uri, [])}
        # the trace has reported (its verdicts, or on JAX 0.12 that it could not lower these)
        return set(expected) <= have and bool(trace_diags())

    await _wait_for(settled, 60)
    # each error once: from the static engine if it already reports it, else from JAX
    got = {(d.range.start.line, d.message) for d in trace_diags()
           if d.code != "TRACE008"}  # TRACE008: JAX 0.12 cannot lower pallas_call kernels here
    assert got == {(ln, msg) for ln, msg in expected.items() if ln not in static_lines()}
    for d in trace_diags():
        assert d.related_information and "entry point" in d.related_information[0].message
    # traced avals on hover, next to the static one (the server shows them with a static hover)
    lines = module.read_text().splitlines()
    line = next(i for i, t in enumerate(lines) if "acc.astype(o_ref.dtype)" in t)
    col = lines[line].index(".astype") + 2
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(line, col)))
    if hover is not None:
        assert "`bfloat16[64,128]`" in hover.contents.value
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(0, 0), lsp.Position(len(lines), 0))))
    labels = [h.label for h in hints or [] if isinstance(h.label, str) and "traced" in h.label]
    assert " traced bfloat16[64,128] | bfloat16[128,256]" in labels

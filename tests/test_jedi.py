"""jedi resolves what the import table cannot: JAX objects re-exported by the user's modules,
and API documentation for hovers — off the analysis path."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from wgmma_lsp.analysis import analyze
from wgmma_lsp.program import Program, lookup

PACKAGE_INIT = """\
from jax.experimental.pallas import mosaic_gpu as gpu
from jax.experimental.pallas.mosaic_gpu import ACC
import jax.numpy as jnp
"""
KERNEL = """\
from mykernels import gpu, ACC, jnp
from jax.experimental import pallas as pl


def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    gpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, ACC((64, 128)))
"""


def make_project(root: Path) -> Path:
    (root / "mykernels").mkdir()
    (root / "mykernels" / "__init__.py").write_text(PACKAGE_INIT)
    kernel = root / "kernel.py"
    kernel.write_text(KERNEL)
    return kernel


def test_reexports_of_workspace_modules_resolved_statically(tmp_path: Path) -> None:
    """The program layer reads the user's package itself: no jedi needed, no waiting."""
    kernel = make_project(tmp_path)
    quick = analyze(KERNEL, str(kernel), program=Program())
    assert quick.unresolved_imports == []
    assert [f.message for f in quick.findings] == ["Accumulator dtype float32 does not match value dtype bfloat16"]


def test_reexports_resolved_synchronously(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Modules the program layer cannot find by file lookup are left to jedi."""
    kernel = make_project(tmp_path)
    monkeypatch.setattr(lookup, "search_roots", lambda *args: ())
    quick = analyze(KERNEL, str(kernel), program=Program())
    assert quick.findings == [] and len(quick.unresolved_imports) == 3  # the fast path never waits
    full = analyze(KERNEL, str(kernel), resolve_with_jedi=True, program=Program())
    assert [f.message for f in full.findings] == ["Accumulator dtype float32 does not match value dtype bfloat16"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "wgmma_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def test_server_resolves_in_the_background(client: LanguageClient, tmp_path: Path) -> None:
    kernel = make_project(tmp_path)
    await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                         root_uri=tmp_path.as_uri()))
    uri = kernel.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=KERNEL)))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while not client.diagnostics.get(uri):
        assert loop.time() < deadline, "jedi never resolved the re-exports"
        await asyncio.sleep(0.1)
    assert [d.code for d in client.diagnostics[uri]] == ["WG001"]
    # API documentation arrives on a later hover, looked up in the background.
    position = lsp.Position(6, 9)  # `wgmma` in gpu.wgmma
    doc_seen = False
    while loop.time() < deadline and not doc_seen:
        hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), position))
        doc_seen = hover is not None and "warp group matmul" in hover.contents.value
        await asyncio.sleep(0.2)
    assert doc_seen

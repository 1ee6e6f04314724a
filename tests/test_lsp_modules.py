"""The program layer over LSP: a kernel whose accumulator comes from a helper in another module
of the user's package gets its diagnostics, and they are published again when that module
changes — edited in the editor, saved, closed, or changed on disk (watched files)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

ALLOCS = textwrap.dedent("""\
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def acc_for():
      return plgpu.ACC((64, 128), jnp.float32)
    """)
KERNEL = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    from mypkg.allocs import acc_for


    def kernel(a_ref, b_ref, o_ref):
      def body(acc_ref):
        plgpu.wgmma(acc_ref, a_ref, b_ref)
        acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)

      pl.run_scoped(body, acc_for())


    def f(a, b):
      return pl.pallas_call(
          kernel,
          out_shape=jax.ShapeDtypeStruct((64, 128), jnp.float32),
          in_specs=[pl.BlockSpec(memory_space=plgpu.SMEM)] * 2,
          out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
      )(a, b)

    # wgmma-lsp: trace f(bf16[64,64], bf16[64,128])
    """)
SMEM = ALLOCS.replace("plgpu.ACC(", "plgpu.SMEM(")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "wgmma_lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def make_project(root: Path) -> tuple[Path, Path]:
    (root / "mypkg").mkdir()
    (root / "mypkg" / "__init__.py").write_text("")
    allocs = root / "mypkg" / "allocs.py"
    allocs.write_text(ALLOCS)
    kernel = root / "kernel.py"
    kernel.write_text(KERNEL)
    return kernel, allocs


async def codes_become(client: LanguageClient, uri: str, codes: list[str], timeout: float = 20.0) -> list:
    """Wait until the published diagnostics have these codes among their accumulator codes
    (WG001 dtype, WG003 ref type); other rules may add their own (a store into SMEM)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        diags = client.diagnostics.get(uri)
        if diags is not None and sorted(d.code for d in diags if d.code in ("WG001", "WG003")) == codes:
            return [d for d in diags if d.code in codes]
        assert loop.time() < deadline, f"expected {codes}, have {diags}"
        await asyncio.sleep(0.05)


def open_doc(client: LanguageClient, path: Path, text: str) -> str:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)))
    return path.as_uri()


def accept_registrations(client: LanguageClient) -> list[lsp.Registration]:
    registrations: list[lsp.Registration] = []

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    return registrations


async def test_editing_saving_and_watching_a_helper_module_republishes(client: LanguageClient,
                                                                        tmp_path: Path) -> None:
    kernel, allocs = make_project(tmp_path)
    accept_registrations(client)
    caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    await client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=tmp_path.as_uri()))
    kernel_uri = open_doc(client, kernel, KERNEL)
    diags = await codes_become(client, kernel_uri, ["WG001"])
    assert any(r.location.uri == allocs.as_uri() and "allocated here" in r.message
               for r in diags[0].related_information or [])

    # The helper module is opened and edited (not saved): the editor's text wins.
    allocs_uri = open_doc(client, allocs, ALLOCS)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=allocs_uri, version=2),
        [lsp.TextDocumentContentChangeWholeDocument(text=SMEM)]))
    await codes_become(client, kernel_uri, ["WG003"])

    # Closed without saving: the text on disk (an accumulator) counts again.
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(allocs_uri)))
    await codes_become(client, kernel_uri, ["WG001"])

    # Changed on disk by another program: the client's file watcher tells the server.
    allocs.write_text(SMEM)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri=allocs_uri, type=lsp.FileChangeType.Changed)]))
    await codes_become(client, kernel_uri, ["WG003"])

    # Opened, changed on disk and saved.
    open_doc(client, allocs, SMEM)
    allocs.write_text(ALLOCS)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=allocs_uri, version=2),
        [lsp.TextDocumentContentChangeWholeDocument(text=ALLOCS)]))
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(allocs_uri)))
    await codes_become(client, kernel_uri, ["WG001"])


async def test_the_server_registers_a_python_file_watcher(client: LanguageClient, tmp_path: Path) -> None:
    registrations = accept_registrations(client)
    caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    await client.initialize_session(lsp.InitializeParams(capabilities=caps, root_uri=tmp_path.as_uri()))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not registrations:
        assert loop.time() < deadline, "no file watcher registered"
        await asyncio.sleep(0.05)
    (reg,) = registrations
    assert reg.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert [w["globPattern"] for w in reg.register_options["watchers"]] == ["**/*.py"]

"""The server hooks, driven by a stand-in server: results, staleness, cancellation on change."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp.settings import Settings
from wgmma_lsp.trace import lsp_glue
from wgmma_lsp.trace.report import SOURCE

from .conftest import FIXTURES, expected_errors


@dataclass
class FakeDocument:
    path: str
    source: str
    version: int = 1

    @property
    def uri(self) -> str:
        return Path(self.path).as_uri()

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines(keepends=True)


@dataclass
class FakeWorkspace:
    text_documents: dict[str, FakeDocument] = field(default_factory=dict)


@dataclass
class FakeServer:
    """The attributes of `WgmmaLanguageServer` that the hooks use."""

    settings: Settings
    workspace: FakeWorkspace = field(default_factory=FakeWorkspace)
    extra_diagnostics: dict = field(default_factory=dict)
    pull_diagnostics: bool = False
    published: list[str] = field(default_factory=list)

    async def analysis_for(self, uri: str):
        return None

    async def publish(self, uri: str) -> None:
        self.published.append(uri)

    async def refresh_diagnostics(self, uris: list[str], force: bool = False) -> None:  # a push client's refresh
        for uri in uris:
            await self.publish(uri)

    def open(self, path: Path) -> FakeDocument:
        doc = FakeDocument(str(path), path.read_text())
        self.workspace.text_documents[doc.uri] = doc
        return doc


async def test_saved_document_gets_diagnostics_hovers_and_hints() -> None:
    ls = FakeServer(Settings(trace_enabled=True))
    path = FIXTURES / "lowering_kernels.py"
    doc = ls.open(path)
    await lsp_glue.on_document_saved(ls, doc.uri)
    assert ls.published == [doc.uri]
    diags = ls.extra_diagnostics[doc.uri]
    verdicts = [d for d in diags if d.code != "TRACE008"]  # TRACE008: JAX 0.12 cannot lower these
    assert {(d.span.line, d.message) for d in verdicts} == set(expected_errors(path).items())
    assert all(d.source == SOURCE for d in diags)
    lines = doc.source.splitlines()
    line = next(i for i, t in enumerate(lines) if "acc = acc_ref[...]" in t)
    col = lines[line].index("acc_ref")
    hover = lsp_glue.hover_lines(ls, doc.uri, line, col)
    assert any("`float32[64,128]`" in h for h in hover) and any("`float32[128,256]`" in h for h in hover)
    assert lsp_glue.inlay_labels(ls, doc.uri, line)
    # an edited line no longer gets the traced avals (they may be wrong for the new text)
    doc.source = doc.source.replace("acc = acc_ref[...]", "acc = acc_ref[...] + 0")
    doc.version += 1
    assert lsp_glue.hover_lines(ls, doc.uri, line, col) == []


async def test_change_kills_the_running_trace() -> None:
    ls = FakeServer(Settings(trace_enabled=True, trace_timeout=60))
    doc = ls.open(FIXTURES / "infinite_loop.py")
    task = asyncio.ensure_future(lsp_glue.on_document_saved(ls, doc.uri))
    state = lsp_glue.state(ls)
    deadline = time.monotonic() + 10
    while doc.uri not in state.running or state.running[doc.uri].pid is None:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    pid = state.running[doc.uri].pid
    doc.version += 1
    lsp_glue.on_document_changed(ls, doc.uri)
    await asyncio.wait_for(task, 10)
    assert doc.uri not in ls.extra_diagnostics and ls.published == []
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive


async def test_no_entry_points_no_process(tmp_path: Path) -> None:
    ls = FakeServer(Settings(trace_enabled=True))
    module = tmp_path / "plain.py"
    module.write_text("x = 1\n")
    doc = ls.open(module)
    await lsp_glue.on_document_saved(ls, doc.uri)
    assert lsp_glue.state(ls).outcomes == {} and ls.extra_diagnostics == {}

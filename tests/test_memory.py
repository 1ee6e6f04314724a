"""Memory stays flat: caches are bounded, and the server keeps nothing per notification."""

from __future__ import annotations

import asyncio
import gc
import random
import sys
import tracemalloc
from pathlib import Path

from lsprotocol import types as lsp

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import jedi_resolve
from wgmma_lsp.server import create_server

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from fuzz_edits import mutate  # noqa: E402

SEED = (ROOT / "examples" / "seed_errors.py").read_text()


def test_jedi_caches_are_bounded() -> None:
    keys = [jedi_resolve.ImportKey("/tmp/x.py", "jax.experimental.pallas", f"mosaic_g{i}")
            for i in range(jedi_resolve.MAX_IMPORTS + 500)]
    jedi_resolve.store_imports({k: None for k in keys})
    assert len(jedi_resolve._imports) <= jedi_resolve.MAX_IMPORTS
    assert jedi_resolve.cached(keys[-1]) == (True, None)  # the newest are kept
    for i in range(jedi_resolve.MAX_DOCS + 100):
        jedi_resolve.needs_doc(f"jax.no_such_{i}")
    assert len(jedi_resolve._docs) <= jedi_resolve.MAX_DOCS


def test_analyses_do_not_accumulate_memory() -> None:
    rng = random.Random(3)
    texts = [mutate(SEED, rng) for _ in range(120)]

    def run(batch: list[str]) -> None:
        for t in batch:
            a = analyze(t, "/tmp/wgmma_memory_kernel.py")
            diagnostics(a)
            a.records

    run(texts[:40])  # warm every bounded cache
    gc.collect()
    tracemalloc.start()
    try:
        run(texts[40:80])
        gc.collect()
        mid = tracemalloc.get_traced_memory()[0]
        run(texts[80:])
        gc.collect()
        end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert end - mid < 200_000, end - mid  # 40 more analyses: no growth beyond noise


def _broken_variants() -> list[str]:
    lines = SEED.split("\n")
    mid = len(lines) // 2
    out = [SEED]
    for bad in ("    x = (1,", "  bad indent = 1", 's = "unterminated', "def f(:"):
        out.append("\n".join(lines[:mid] + [bad] + lines[mid:]))
    rng = random.Random(7)
    return out + [mutate(SEED, rng) for _ in range(12)]


def test_a_dropped_analysis_is_freed_without_the_collector() -> None:
    """An analysis must not live on in reference cycles once dropped: the server raises the
    collector's thresholds, so cyclic garbage waited for a rare full collection, and RSS grew
    with it (the scopes functions close over, a syntax error's traceback holding every frame of
    the analysis, parso's parent links). Dropping one must leave (almost) nothing to collect."""
    texts = _broken_variants()
    for t in texts[:3]:  # lazily built tables (jax's sources, parso's grammar) filled
        analyze(t, "/tmp/wgmma_memory_kernel.py").records
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        left = []
        for i, t in enumerate(texts):
            a = analyze(t, "/tmp/wgmma_memory_kernel.py")
            diagnostics(a)
            if i % 2:
                a.records  # the hover pass too
            del a
            left.append(gc.collect())
    finally:
        if was_enabled:
            gc.enable()
    # Before: 600-1,950 objects per analysis of this file (its whole syntax tree and values).
    assert max(left) <= 50, left


class _Writer:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


def test_notifications_leave_no_futures_behind() -> None:
    """pygls keeps each handler's future by message id and dropped it only for requests."""
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(_Writer())
    uri = "file:///tmp/wgmma_futures.py"

    async def session() -> None:
        def handle(method: str, params: dict, msg_id: int | None = None) -> None:
            message = {"jsonrpc": "2.0", "method": method, "params": params}
            if msg_id is not None:
                message["id"] = msg_id
            protocol.handle_message(protocol.structure_message(message))

        handle("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, 1)
        handle("initialized", {})
        handle("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                         "version": 1, "text": SEED}})
        for v in range(2, 60):
            handle("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                              "contentChanges": [{"text": SEED + f"# {v}\n"}]})
        for _ in range(400):
            await asyncio.sleep(0.05)
            if not protocol._request_futures:
                break
        assert len(protocol._request_futures) == 0
        server.close_pools()

    asyncio.run(session())
    server.pool.shutdown(wait=True)
    assert lsp.TEXT_DOCUMENT_DID_CHANGE  # (the names used above are the protocol's)


def test_program_tables_are_bounded(tmp_path: Path, monkeypatch) -> None:
    """The program layer keeps texts read from disk and documents' dependencies within their bounds."""
    from wgmma_lsp.program import Program
    from wgmma_lsp.program import program as P

    monkeypatch.setattr(P, "MAX_DISK_TEXTS", 3)
    monkeypatch.setattr(P, "MAX_DOCUMENTS", 4)
    program = Program(roots=(str(tmp_path),))
    for i in range(10):
        (tmp_path / f"m{i}.py").write_text(f"X = {i}\n")
        doc = tmp_path / f"doc{i}.py"
        doc.write_text(f"from m{i} import X\n")
        analyze(doc.read_text(), str(doc), program=program)
    assert len(program._disk) <= 3 and str(tmp_path / "m9.py") in program._disk
    assert len(program._analysed) <= 4
    assert program.dependants(str(tmp_path / "m9.py")) == {str(tmp_path / "doc9.py")}

"""The program layer in the server: open documents' texts win over the disk's, the workspace
roots are search roots, and a change to one of the user's modules — an edit of its open
document, a save, or a change on disk the client reports through `workspace/didChangeWatchedFiles`
(a watcher for `**/*.py` is registered dynamically when the client supports it) — re-analyses
the open documents whose last analysis read it.

The server calls the `on_*` functions from its handlers; this module owns nothing else of it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from lsprotocol import types as lsp
from pygls import uris

from wgmma_lsp.program.program import Program, default_program

log = logging.getLogger("wgmma_lsp")

WATCHER_ID = "wgmma-lsp-python-files"


def _path(uri: str) -> str | None:
    p = uris.to_fs_path(uri)
    return os.path.abspath(p) if p else None


def attach(server: Any, program: Program | None = None) -> None:
    """Wire the program to a server: overlay from its open documents, the watched-files handler."""
    prog = program or default_program()
    server.program = prog

    def overlay(path: str) -> str | None:
        for doc in list(server.workspace.text_documents.values()):
            if doc.uri.startswith("file:") and _path(doc.uri) == path:
                return doc.source
        return None

    prog.overlay = overlay

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: Any, params: lsp.DidChangeWatchedFilesParams) -> None:
        try:
            changed = [p for p in (_path(c.uri) for c in params.changes) if p]
            await refresh_dependants(ls, changed)
        except Exception:
            log.exception("didChangeWatchedFiles failed")


def on_initialized(ls: Any) -> None:
    """Workspace roots become search roots; register the `**/*.py` watcher if we may."""
    prog: Program = getattr(ls, "program", default_program())
    roots: list[str] = []
    try:
        folders = ls.workspace.folders or {}
        roots = [p for p in (_path(f.uri) for f in folders.values()) if p]
        if not roots and ls.workspace.root_path:
            roots = [os.path.abspath(ls.workspace.root_path)]
    except Exception:
        log.debug("no workspace roots", exc_info=True)
    prog.roots = tuple(roots)
    log.info("program: workspace roots %s", ", ".join(roots) or "(none)")
    caps = ls.client_capabilities
    watched = caps.workspace.did_change_watched_files if caps and caps.workspace else None
    if watched is None or not watched.dynamic_registration:
        log.info("program: the client cannot watch files for us; dependants are re-analysed on "
                 "edits and saves of open documents only")
        return
    params = lsp.RegistrationParams(registrations=[lsp.Registration(
        id=WATCHER_ID, method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern="**/*.py")]))])

    async def register() -> None:
        try:
            await ls.client_register_capability_async(params)
        except Exception:
            log.debug("file watcher registration failed", exc_info=True)

    asyncio.ensure_future(register())


def on_document_changed(ls: Any, uri: str) -> None:
    """An open document was edited or saved: documents that import it are analysed again."""
    path = _path(uri) if uri.startswith("file:") else None
    if path is not None:
        asyncio.ensure_future(refresh_dependants(ls, [path]))


def on_document_closed(ls: Any, uri: str) -> None:
    """Closed: its text on disk counts again (it may differ from the editor's last text)."""
    path = _path(uri) if uri.startswith("file:") else None
    if path is None:
        return
    prog: Program = getattr(ls, "program", default_program())
    prog.forget_document(path)
    asyncio.ensure_future(refresh_dependants(ls, [path]))


async def refresh_dependants(ls: Any, paths: list[str]) -> None:
    prog: Program = getattr(ls, "program", default_program())
    dependants: set[str] = set()
    for p in paths:
        dependants |= prog.changed(p)
    if not dependants:
        return
    uris_to_refresh = []
    for doc in list(ls.workspace.text_documents.values()):
        if doc.uri.startswith("file:") and _path(doc.uri) in dependants:
            ls.invalidate(doc.uri)  # same version, new inputs: analyse again
            uris_to_refresh.append(doc.uri)
    if uris_to_refresh:
        log.info("program: %s changed; analysing %d dependant document(s) again",
                 ", ".join(os.path.basename(p) for p in paths), len(uris_to_refresh))
        await ls.refresh_diagnostics(uris_to_refresh)

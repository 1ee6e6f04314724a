"""How the language server uses trace mode (stub: trace mode is not implemented yet).

The server calls these hooks; they must never raise and never import user code in-process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from wgmma_lsp.server import WgmmaLanguageServer


async def on_document_saved(ls: "WgmmaLanguageServer", uri: str) -> None:
    """Called after didOpen/didSave when `trace.enabled`; may update `ls.extra_diagnostics[uri]`."""


def on_document_changed(ls: "WgmmaLanguageServer", uri: str) -> None:
    """Called on every didChange/didClose: a running trace of that document is now stale."""


def hover_lines(ls: "WgmmaLanguageServer", uri: str, line: int, col: int) -> list[str]:
    """Extra Markdown lines for a hover at (line, col), e.g. 'traced: `float32[128,256]`'."""
    return []


def inlay_labels(ls: "WgmmaLanguageServer", uri: str, line: int) -> list[tuple[int, str]]:
    """Extra inlay hints (column, label) for a line, from the traced jaxpr."""
    return []

"""Open documents as the LSP specification wants them kept, whatever the client sends.

- `didChange` for a document that is not open: logged, ignored (no KeyError, no pop-up).
- A change range outside the document is clamped (a character past the end of its line means
  the end of the line, as the specification says; a line past the end means the end of the
  document; a range whose end comes before its start is applied as the range between the two),
  and logged, rather than dropped: the server's copy never silently drifts from the editor's.
- Every `didOpen` and `didChange` gives the document a new *generation*, the key analyses are
  cached by: a reused version number, or a second `didOpen` without `didClose`, is analysed
  again (never a stale answer).
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import TextDocument

log = logging.getLogger("wgmma_lsp")


def apply_change(doc: TextDocument, change: Any) -> None:
    """Apply one content change to `doc`, clamping its range to the document."""
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        doc._source = change.text  # a full-text change
        return
    source = doc.source
    lines = doc.lines
    start = _offset(doc, lines, change.range.start, "start")
    end = _offset(doc, lines, change.range.end, "end")
    if end < start:
        log.error("didChange for %s: a range that ends before it starts (%s): applied between them",
                  doc.uri, _fmt(change.range))
        start, end = end, start
    doc._source = source[:start] + change.text + source[end:]


def _offset(doc: TextDocument, lines: Any, pos: lsp.Position, which: str) -> int:
    """The code-point offset of a client position, clamped to the document."""
    line, character = pos.line, pos.character
    if line < 0 or character < 0:
        log.error("didChange for %s: negative %s position %d:%d, clamped", doc.uri, which, line, character)
        line, character = max(line, 0), max(character, 0)
    if line >= len(lines):
        if line > len(lines) or character > 0:
            log.error("didChange for %s: %s position %d:%d is past the end of the document "
                      "(%d lines), clamped to its end", doc.uri, which, pos.line, pos.character, len(lines))
        return sum(len(ln) for ln in lines)
    text = lines[line]
    body = text.rstrip("\r\n")
    # past the end of the line means the end of the line (the specification's rule)
    col = _code_points(body, character, _units(doc))
    return sum(len(ln) for ln in lines[:line]) + col


def _units(doc: TextDocument) -> int:
    """Bytes per code unit of the client's position encoding: 1 (UTF-8), 2 (UTF-16), 4 (UTF-32)."""
    encoding = str(getattr(doc.position_codec, "encoding", "utf-16")).lower()
    return 1 if "8" in encoding else 4 if "32" in encoding else 2


def _code_points(text: str, units: int, unit_size: int) -> int:
    """How many code points of `text` the first `units` code units cover (clamped to the text)."""
    if unit_size == 4 or text.isascii():
        return min(units, len(text))
    seen = 0
    for i, ch in enumerate(text):
        if seen >= units:
            return i
        cp = ord(ch)
        if unit_size == 2:
            seen += 2 if cp > 0xFFFF else 1
        else:
            seen += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    return len(text)


def _fmt(rng: lsp.Range) -> str:
    return f"{rng.start.line}:{rng.start.character}-{rng.end.line}:{rng.end.character}"

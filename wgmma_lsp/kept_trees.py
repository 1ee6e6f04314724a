"""Syntax trees of texts parsed before in this process, by (path, content digest).

The program layer keeps the trees of the user's modules it interprets (`program/program.py`: a
module whose summary cannot be reused is interpreted again by each analysis, its unchanged text
not parsed again). `wgmma-lsp check` of a folder also analyses most of those modules as
documents, and imports most of its documents as modules of other documents: one file parsed
twice, once each way (tokamax: 184 of its 640 parses, a third of the text parsed). While
`documents_kept()` lasts — `wgmma-lsp check` runs in it (cli.py) — an analysed document's tree
is looked up and kept here too, so each text is parsed once per worker.

The language server leaves it off: the document being typed is a new text at every keystroke,
and keeping each version would push the modules' trees out. Sharing a tree is safe because
nothing writes to one but caches of what its own syntax says (`_wgmma_generator`,
`_wgmma_annotations`, `_wgmma_body_bindings`), and one analysis never holds the same file as
document and as module (the program layer gives the document's own values for an import of
it). Only trees parsed without a syntax error are kept; the oldest dropped first.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

from wgmma_lsp.bounded import put_newest, trim
from wgmma_lsp.digest import blake2b
from wgmma_lsp.syntax import Parsed, parse

MAX_TREES = 64
#: Documents' trees looked up and kept as well (see above): `wgmma-lsp check` only
#: (`documents_kept`).
keep_documents = False
#: Trees kept then: a folder's modules and documents (tokamax: +35 MB at most for a worker).
MAX_TREES_WITH_DOCUMENTS = 256

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Iterator

_TREES: dict[tuple[str, str], Parsed] = {}
_LOCK = threading.Lock()


def digest_of(text: str) -> str:
    """A text's content digest (the program layer's key of a module's text)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@contextmanager
def documents_kept() -> Iterator[None]:
    """`wgmma-lsp check`: documents' trees looked up and kept too, and more trees kept, while
    the run lasts (a process that embeds the checker, such as the test suite, serves editors
    afterwards as before)."""
    global keep_documents, MAX_TREES
    saved = keep_documents, MAX_TREES
    keep_documents, MAX_TREES = True, max(MAX_TREES, MAX_TREES_WITH_DOCUMENTS)
    try:
        yield
    finally:
        keep_documents, MAX_TREES = saved
        with _LOCK:
            trim(_TREES, MAX_TREES)


def parsed(path: str, text: str, digest: str) -> Parsed:
    """`parse(text)`, kept by (absolute path, digest) when it found no syntax error."""
    key = (path, digest)
    with _LOCK:
        hit = _TREES.get(key)
    if hit is not None:
        return hit
    result = parse(text)
    if not result.errors and not result.repaired:
        with _LOCK:
            put_newest(_TREES, key, result, MAX_TREES)
    return result


def document(source: str, path: str | None) -> Parsed:
    """The parse of an analysed document: through the kept trees when `keep_documents` is on
    and the document has a path, else parsed here."""
    if not keep_documents or not path:
        return parse(source)
    return parsed(os.path.abspath(path), source, digest_of(source))


def clear() -> None:
    """Forget every kept tree (tests)."""
    with _LOCK:
        _TREES.clear()

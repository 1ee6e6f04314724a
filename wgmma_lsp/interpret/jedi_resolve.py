"""jedi for what the import table cannot see: names re-exported by the user's own modules
(`from mykernels.common import plgpu, ACC`), and the JAX API's documentation for hovers.

jedi is slow on first use (hundreds of milliseconds to seconds), so it never runs on the
analysis path of the server: the interpreter only reads this module's caches and lists what it
could not resolve; the server resolves those in a separate process (a thread would hold the
interpreter lock and delay hovers) and analyses again. The CLI resolves synchronously.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp.bounded import trim
from wgmma_lsp.interpret import resolve

log = logging.getLogger("wgmma_lsp")


@dataclass(frozen=True)
class ImportKey:
    path: str  # the importing file
    module: str  # as written, e.g. "mykernels.common" (dots for relative imports: "..common")
    name: str  # the imported name (for `import x.y`, the empty string)


@dataclass(frozen=True)
class Pending:
    key: ImportKey
    line: int  # 1-based, for jedi
    col: int  # 0-based column of the name in the line


MAX_IMPORTS = 4096  # remembered import facts (half-typed imports make new keys: bounded)
MAX_DOCS = 2048  # remembered docstrings

_lock = threading.Lock()
_imports: dict[ImportKey, str | None] = {}  # key -> canonical name (None: not a JAX API object)
_docs: dict[str, str | None] = {}


#: The kind of observation (observed.py) an analysis notes when it uses what jedi found.
OBSERVATION = "jedi"


def observation_key(p: Pending) -> str:
    return "\0".join([p.key.path, p.key.module, p.key.name, str(p.line), str(p.col)])


def still_found(where: str, canonical: str | None) -> bool:
    """Does jedi still say what an earlier analysis used (`observation_key`, its answer)? The
    importing file is read as it is now."""
    path, module, name, line, col = where.split("\0")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError:
        return False
    p = Pending(ImportKey(path, module, name), int(line), int(col))
    return compute_imports(source, path, [p])[p.key] == canonical


def cached(key: ImportKey) -> tuple[bool, str | None]:
    with _lock:
        if key in _imports:
            return True, _imports[key]
    return False, None


def resolve_imports(source: str, path: str, pending: list[Pending]) -> int:
    """Resolve with jedi, here and now (the CLI); returns how many new facts were learnt."""
    todo = [p for p in pending if not cached(p.key)[0]]
    if not todo:
        return 0
    return store_imports(compute_imports(source, path, todo))


def store_imports(found: dict[ImportKey, str | None]) -> int:
    """Remember what jedi found (e.g. in another process); returns how many names resolved."""
    with _lock:
        _imports.update(found)
        trim(_imports, MAX_IMPORTS)
    return sum(v is not None for v in found.values())


def compute_imports(source: str, path: str, todo: list[Pending]) -> dict[ImportKey, str | None]:
    """What jedi says each pending import is (a canonical JAX name, or None). Pure: it runs in a
    separate process in the server, so that jedi never holds the server's interpreter lock."""
    found: dict[ImportKey, str | None] = {p.key: None for p in todo}
    try:
        import jedi

        project = jedi.Project(str(Path(path).parent)) if path else None
        text, shifts = imports_only(source, todo)
        script = jedi.Script(text, path=path, project=project)
    except Exception:
        log.debug("jedi unavailable", exc_info=True)
        return found
    for p in todo:
        canonical: str | None = None
        try:
            for d in script.goto(p.line, p.col - shifts.get(p.line, 0), follow_imports=True):
                full = d.full_name or ""
                canonical = resolve.canonical_module(full)
                if canonical is not None:
                    if d.type != "module":
                        mod, _, attr = canonical.rpartition(".")
                        canonical = resolve.canonical_name(mod, attr) if mod else canonical
                    break
        except Exception:
            log.debug("jedi failed on %s", p, exc_info=True)
        found[p.key] = canonical
    return found


def imports_only(source: str, todo: list[Pending]) -> tuple[str, dict[int, int]]:
    """The source jedi reads: only the import statements the pending names sit in, on their own
    lines, each moved to column 0 (what a name imported there is does not depend on the rest of
    the file, and parso's parse of a 2,000-line file costs more than the lookups); and, per
    1-based line, how many columns it moved left. The whole source when it does not parse."""
    import ast
    import re

    if "sys.path" in source:  # jedi reads sys.path changes made in the file itself
        return source, {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source, {}
    wanted = {p.line for p in todo}
    lines = re.split(r"\r\n|\r|\n", source)  # the lines CPython counts (not str.splitlines')
    out = [""] * len(lines)
    shifts: dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.end_lineno is None:
            continue
        first, last = node.lineno, node.end_lineno
        if not any(first <= n <= last for n in wanted):
            continue
        if last > len(lines):
            return source, {}
        before = lines[first - 1].encode()[:node.col_offset].decode(errors="replace")
        after = lines[last - 1].encode()[node.end_col_offset:].decode(errors="replace").strip()
        if before.strip() or (after and not after.startswith("#")):
            return source, {}  # `if x: import y` or `import y; z = 1`: not on lines of its own
        for n in range(first, last + 1):
            text = lines[n - 1]
            cut = min(node.col_offset, len(text) - len(text.lstrip()))
            out[n - 1] = text[cut:]
            shifts[n] = cut
    return "\n".join(out) + "\n", shifts


_MODULE_PATHS = {"plgpu": "jax.experimental.pallas.mosaic_gpu", "pl": "jax.experimental.pallas",
                 "jnp": "jax.numpy", "lax": "jax.lax", "jax": "jax"}


def api_doc(canonical: str) -> str | None:
    """The docstring of a JAX API object, if already looked up (see `warm_api_doc`)."""
    with _lock:
        return _docs.get(canonical)


def needs_doc(canonical: str) -> bool:
    """True the first time a name is asked about (the caller then looks it up)."""
    with _lock:
        if canonical in _docs:
            return False
        _docs[canonical] = None
        trim(_docs, MAX_DOCS)
        return True


def store_doc(canonical: str, doc: str | None) -> None:
    if doc:
        with _lock:
            _docs[canonical] = doc.strip()


def compute_doc(canonical: str) -> str | None:
    """jedi's docstring for a canonical API name (pure; runs in a separate process)."""
    prefix, _, rest = canonical.partition(".")
    module = _MODULE_PATHS.get(prefix)
    if module is None or not rest:
        return None
    try:
        import jedi

        code = f"import {module} as _m\n_m.{rest}"
        defs = jedi.Script(code).infer(2, len("_m.") + len(rest) - 1)
        return defs[0].docstring() if defs else None
    except Exception:
        log.debug("jedi doc lookup failed for %s", canonical, exc_info=True)
        return None

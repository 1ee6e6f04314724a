"""The cheap test that decides which files `check` analyses at all.

A finding needs a Pallas / Mosaic GPU API object (`pl.run_scoped`, `plgpu.ACC`, `plgpu.wgmma`…)
to reach the file's code. It gets there in one of two ways:

1. the file imports the API itself: an import statement that the analysis's own import table
   (`interpret/resolve.py`) maps to Pallas — `jax.experimental.pallas`, its `mosaic_gpu`
   (`plgpu`), `tpu` and `triton` modules, the private `jax._src.pallas…` paths — or code that
   spells `jax.experimental.pallas…` out in full. Not the layer below (`jax.experimental.mosaic.gpu`,
   which the models use only for `mgpu.profiler.measure(f)`, where an `f` that can fail comes
   from a module that imports Pallas), nor the compiler's `mosaic_gpu` dialect;
2. the file imports, from one of the user's own modules (a `.py` file next to it or in its
   package), a name that module binds to the API: `from mykernels.common import ACC, plgpu`
   where `common.py` imports them from JAX or from another user module that does (followed
   transitively), or `import mykernels.common` of such a module.

What is not followed, by design (the trade-off for a check that costs next to nothing on a
file that does not use Pallas): helper *functions* imported from user modules (a function in
`common.py` that uses the API is analysed in `common.py`, where its own errors are reported;
what it returns is not tracked into files that never name the API), imports built at run time
(`importlib.import_module`, `__import__`, `exec`), and re-exports by installed third-party
packages (not the user's code). A keyword in a comment or string never selects a file, unless
it sits on an import line; an import inside a string only makes a file look relevant (a wasted
analysis, never a missed one).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.program import lookup

# Whole names only: `jax._src.lax.pallas_lowerings` is not the API.
_KEYWORD = rb"(?<![\w])(?:pallas|mosaic_gpu|plgpu|mosaic\.gpu|mosaic\s+import\s+gpu)(?![\w])"
_KEYWORD_RE = LazyPattern(_KEYWORD)
# Each starts with the newline before the statement (the text is searched with one prepended):
# a literal first character lets the regex engine skip ahead quickly.
_FROM_RE = LazyPattern(rb"\n[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)")
_IMPORT_RE = LazyPattern(rb"\n[ \t]*import[ \t]+([^\n#;]+)")
# `jax.experimental.pallas.mosaic_gpu.wgmma(...)` spelled out in code (not `jaxlib.mosaic.gpu`).
_SPELLED_OUT_RE = re.compile(rb"\bexperimental\s*\.\s*pallas\b")
_ASSIGN_RE = LazyPattern(rb"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=([^=\n][^\n]*)", re.M)
_IDENT_RE = LazyPattern(rb"[A-Za-z_]\w*")
_DEF_RE = LazyPattern(rb"\n(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
_NAME_RE = LazyPattern(rb"[A-Za-z_]\w*(?:[ \t]+as[ \t]+[A-Za-z_]\w*)?|\*")

Import = tuple[int, str, list[tuple[str, str]], bytes]  # level, module, [(name, bound as)], text


def _names(text: bytes) -> list[tuple[str, str]]:
    out = []
    for m in _NAME_RE.findall(text.strip(b"()")):
        words = m.split()
        name = words[0].decode("ascii", "replace")
        out.append((name, words[-1].decode("ascii", "replace")))
    return out


def imports(data: bytes) -> list[Import]:
    """Every import statement in the text: (relative level, module, [(name, bound as)], text)."""
    out: list[Import] = []
    data = b"\n" + data
    for m in _FROM_RE.finditer(data):
        spec = m.group(1).decode("ascii", "replace")
        level = len(spec) - len(spec.lstrip("."))
        out.append((level, spec[level:], _names(m.group(2)), m.group(0)[1:]))
    for m in _IMPORT_RE.finditer(data):
        for part in m.group(1).split(b","):
            words = part.split()
            if words:
                module = words[0].decode("ascii", "replace")
                bound = words[-1].decode("ascii", "replace") if len(words) == 3 else module.split(".")[0]
                out.append((0, module, [("", bound)], part))
    return out


def names_api(data: bytes) -> bool:
    """Does the text import the API itself (or spell it out in full)?"""
    if not _has_keyword(data):
        return False
    if _SPELLED_OUT_RE.search(data):
        return True
    return any(imports_api(imp) for imp in imports(data))


#: Canonical prefixes (interpret/resolve.py) of the API a finding is about. Not `mgpu`
#: (`jax.experimental.mosaic.gpu`, the layer below Pallas): the models use it only for
#: `mgpu.profiler.measure(f)`, and an `f` that can fail comes from a module that imports Pallas.
_API_PREFIXES = ("pl", "plgpu", "pl_private", "plgpu_private", "pltpu", "plgpu_triton")


def imports_api(imp: Import) -> bool:
    """Does an import statement bring in the Pallas / Mosaic GPU API, as the analysis's own
    import table (`interpret/resolve.py`) reads it? (`from jax._src.lib import mosaic_gpu`, the
    compiler's dialect, does not.)"""
    from wgmma_lsp.interpret.resolve import canonical_module

    level, module, bound, text = imp
    if level or not _KEYWORD_RE.search(text):
        return False
    paths = [module] + [f"{module}.{name}" for name, _ in bound if name and name != "*"]
    for path in paths:
        short = canonical_module(path)
        if short is not None and short.split(".")[0] in _API_PREFIXES and not _tpu_only(short):
            return True
    return False


def _tpu_only(short: str) -> bool:
    """Pallas's TPU backend (`pltpu`, the private `jax._src.pallas.mosaic...`): no model of it
    reports anything (its one model, `InterpretParams`, only marks interpret mode), so what it
    brings into a file cannot make a finding there — while jax's own `mlir.py` imports it in
    a function that half of jax reaches."""
    return short == "pltpu" or short.startswith("pltpu.") or short == "pl_private.mosaic" \
        or short.startswith("pl_private.mosaic.")


@functools.lru_cache(maxsize=8192)
def _imports_by_content(data: bytes) -> list[Import]:
    """`imports(data)`, once per content in a process (the same file read by the prefilter of
    `check_files` and by the import question of each analysis; copies of a file; empty
    `__init__.py`s). Callers do not modify the list."""
    return imports(data)


def _has_keyword(data: bytes) -> bool:
    return b"pallas" in data or b"mosaic" in data or b"plgpu" in data


@functools.lru_cache(maxsize=65536)
def _roots_of(folder: str, workspace_roots: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The program layer's search roots for a module in `folder` (`program/lookup.py`), with
    the same workspace roots (the working directory of `check`, its `src/`, its virtualenv's
    editable installs): the prefilter follows exactly the imports the analysis can follow."""
    return lookup.search_roots(os.path.join(folder, "__init__.py"), workspace_roots)


@functools.lru_cache(maxsize=65536)
def _find_absolute(folder: str, dotted: str, workspace_roots: tuple[str, ...] = ()) -> str | None:
    """The file of module `dotted` imported from a module in `folder`: the program layer's own
    lookup (`lookup.find_absolute`), with its roots and own package; a namespace package has
    no file (its submodules are looked up by their own names)."""
    if not all(p.isidentifier() for p in dotted.split(".")):
        return None
    return _file(_find_in_roots(_roots_of(folder, workspace_roots), _own_package(folder), dotted))


@functools.lru_cache(maxsize=65536)
def _own_package(folder: str) -> tuple[str, str] | None:
    """`lookup.own_package` of a module in `folder`: an installed package's own modules."""
    return lookup.own_package(os.path.join(folder, "__init__.py"))


@functools.lru_cache(maxsize=65536)
def _find_in_roots(roots: tuple[str, ...], own: tuple[str, str] | None,
                   dotted: str) -> str | lookup.Namespace | None:
    """`lookup.find_absolute`, once per (roots, own package, module) in a run: the folders of one
    installed package share their roots (jax's 600 files ask the same few)."""
    return lookup.find_absolute(dotted, roots, own)


def _file(found: str | lookup.Namespace | None) -> str | None:
    return found if isinstance(found, str) else None


@functools.lru_cache(maxsize=65536)
def _find_relative(folder: str, level: int, dotted: str) -> str | None:
    return _file(lookup.find_relative(os.path.join(folder, "__init__.py"), level, dotted))


def cache_clear() -> None:
    """Forget the module lookups (files created or removed since)."""
    for f in (_roots_of, _own_package, _find_absolute, _find_in_roots, _find_relative):
        f.cache_clear()


def _key(path: Path | str) -> str:
    return os.path.abspath(path)


# The end of a top-level block: the newline before the next line that starts in column 0 (not
# blank, not a comment, not the closing bracket of a signature split over lines).
_COLUMN0_RE = LazyPattern(rb"\n(?=[^ \t\r\n#)\]}])")


def defs_reaching_api(data: bytes) -> set[str]:
    """The top-level functions and classes of a module that imports the API itself which may use
    it. Every one of them, when an import of the API binds a module-level name (or the API is
    spelled out); when each import of it sits in a function or class body (`from
    jax._src.pallas.mosaic_gpu.layout_rules import ...` inside one function of jax's
    `lax/utils.py`), the blocks holding one and, to a fixpoint, those whose body names one of
    these (a call). Every one again when module-level code names one of them (`X = helper()`, a
    decorator, a registration: what reaches them from there is not followed). A block ends at the
    first line in column 0; a string continued there makes it end early, and the rest of its body
    counts as module-level code (every block then, if it names one)."""
    text = b"\n" + data
    starts = [(m.start(), m.group(1).decode("ascii", "replace")) for m in _DEF_RE.finditer(text)]
    every = {name for _, name in starts}
    if not starts:
        return every
    statements = [*_FROM_RE.finditer(text), *_IMPORT_RE.finditer(text)]
    spans = [m.span() for m in statements]
    if any(not any(a <= s.start() < b for a, b in spans) for s in _SPELLED_OUT_RE.finditer(text)):
        return every  # `jax.experimental.pallas.X` spelled out in code
    ends = []
    for start, _ in starts:
        line_end = text.find(b"\n", start + 1)
        m = _COLUMN0_RE.search(text, line_end) if line_end >= 0 else None
        ends.append(m.start() if m else len(text))
    holders: set[int] = set()
    for m in statements:
        statement = m.group(0)[1:]
        if not _KEYWORD_RE.search(statement) or not any(imports_api(imp) for imp in imports(statement)):
            continue
        block = next((i for i, (start, _) in enumerate(starts)
                      if start < m.start() < ends[i] and statement[:1] in (b" ", b"\t")), None)
        if block is None:
            return every  # a module-level binding of the API (or one this reading cannot place)
        holders.add(block)
    bodies = [set(_IDENT_RE.findall(text, start, end)) for (start, _), end in zip(starts, ends)]
    outside = set(_IDENT_RE.findall(text, 0, starts[0][0]))
    for i, end in enumerate(ends):
        outside |= set(_IDENT_RE.findall(text, end, starts[i + 1][0] if i + 1 < len(starts) else len(text)))
    out = {starts[i][1] for i in holders}
    changed = True
    while changed:
        changed = False
        named = {n.encode() for n in out}
        for i, (_, name) in enumerate(starts):
            if name not in out and bodies[i] & (named - {name.encode()}):
                out.add(name)
                changed = True
    if outside & {n.encode() for n in out}:
        return every
    return out


def _spells_attribute(data: bytes, prefix: str, names: set[str],
                      attributes: frozenset[str] | None = None) -> bool:
    """Does the code use `prefix.NAME` for one of `names` (a module's API names)?
    `attributes`: `_attributes_after(data, prefix)`, when the caller keeps it."""
    if not names:
        return False
    if "*" in names:
        return True
    if data.isascii():  # (then no name spelled in it has other characters)
        if attributes is None:
            attributes = _attributes_after(data, prefix)
        return not attributes.isdisjoint(names)
    pattern = re.escape(prefix).encode() + rb"\s*\.\s*(" + b"|".join(
        re.escape(n).encode() for n in sorted(names)) + rb")\b"
    return re.search(pattern, data) is not None


def _attributes_after(data: bytes, prefix: str) -> frozenset[str]:
    """Every word `W` an ASCII text spells as `prefix.W` (whitespace around the dot allowed;
    overlapping spellings too: `pl.pl.x` gives `pl` and `x`). One set answers
    what `re.search(prefix\\s*\\.\\s*(NAME|...)\\b)` answers for any of them: a whole word
    `NAME` there is exactly a match of the alternation followed by a word boundary."""
    pattern = rb"(?=" + re.escape(prefix).encode() + rb"\s*\.\s*(\w+))"
    return frozenset(m.group(1).decode("ascii") for m in re.finditer(pattern, data))


class Prefilter:
    """Which of a set of files must be analysed (see the module docstring)."""

    def __init__(self, workspace_roots: tuple[str, ...] = ()) -> None:
        # The program layer's roots (`Program.roots`: for `check`, the working directory): an
        # import the analysis resolves through them (a `src/` layout) is followed here too.
        self._workspace = tuple(os.path.abspath(r) for r in workspace_roots)
        self._data: dict[str, bytes] = {}
        self._imports: dict[str, list[Import]] = {}
        self._api: dict[str, set[str]] = {}  # module file -> names it binds to the API ("*": all)
        self._direct: dict[str, bool] = {}  # module file -> imports the API itself
        self._attrs: dict[tuple[str, str], frozenset[str]] = {}  # (module file, prefix) -> `_attributes_after`

    def add(self, path: Path, data: bytes) -> None:
        self._data.setdefault(_key(path), data)

    def _text(self, key: str) -> bytes:
        if key not in self._data:
            try:
                with open(key, "rb") as f:
                    self._data[key] = f.read()
            except OSError:
                self._data[key] = b""
        return self._data[key]

    def _attributes(self, key: str, prefix: str, names: set[str]) -> frozenset[str] | None:
        """`_attributes_after` of a module's text, kept per (module, prefix): `_solve` asks again
        at every round of its fixpoint, with a growing set of names."""
        got = self._attrs.get((key, prefix))
        if got is None:
            data = self._text(key)
            if not names or "*" in names or not data.isascii():
                return None  # (answered without it)
            got = self._attrs[(key, prefix)] = _attributes_after(data, prefix)
        return got

    def _imports_of(self, key: str) -> list[Import]:
        if key not in self._imports:
            self._imports[key] = _imports_by_content(self._text(key))
        return self._imports[key]

    def _resolve(self, importer: str, level: int, module: str) -> str | None:
        """The user's module file an import names, found as the program layer finds it."""
        folder = os.path.dirname(importer)
        f = _find_relative(folder, level, module) if level else (
            _find_absolute(folder, module, self._workspace) if module else None)
        return f if f is not None and f != importer else None

    def _edges(self, key: str) -> list[tuple[str, str, str, str | None]]:
        """What each import of a module may bring in: (kind, bound name, name, source file).
        kinds: "api" (imported from JAX), "name" (`from m import name`), "star", "module"
        (`import m` / `from pkg import m`: reached as `m.NAME`)."""
        keyword = _has_keyword(self._text(key))
        out: list[tuple[str, str, str, str | None]] = []
        for level, module, bound, text in self._imports_of(key):
            if keyword and imports_api((level, module, bound, text)):
                out.extend(("api", b, "", None) for _, b in bound)
                continue
            source = self._resolve(key, level, module)
            for name, as_ in bound:
                if name == "":
                    if source is not None:
                        out.append(("module", module if as_ == module.split(".")[0] else as_, "", source))
                    continue
                if source is not None:
                    out.append(("star" if name == "*" else "name", as_, name, source))
                if name != "*":
                    sub = self._resolve(key, level, f"{module}.{name}" if module else name)
                    if sub is not None:
                        out.append(("module", as_, "", sub))
        return out

    def _solve(self, roots: Iterable[str]) -> None:
        """API names of every module reachable from `roots`, to a fixpoint (import cycles)."""
        edges: dict[str, list[tuple[str, str, str, str | None]]] = {}
        todo = [k for k in roots if k not in self._api]
        while todo:
            key = todo.pop()
            if key in edges or key in self._api:
                continue
            edges[key] = self._edges(key)
            todo.extend(src for *_, src in edges[key] if src is not None)
        for key in edges:
            # A module that imports the API itself: its functions and classes may use it, and
            # the program layer follows calls into them (findings reported at the call site).
            self._api[key] = (defs_reaching_api(self._text(key)) if self._imports_api_itself(key)
                              else set())
        changed = True
        while changed:
            changed = False
            for key, es in edges.items():
                names = self._api[key]
                before = len(names)
                for kind, as_, name, src in es:
                    if as_ in names:
                        continue
                    exported = self._api[src] if src is not None else set()
                    if kind == "api":
                        names.add(as_)
                    elif kind == "star":
                        names.update(exported)
                    elif kind == "name" and (name in exported or "*" in exported):
                        names.add(as_)
                    elif kind == "module" and _spells_attribute(
                            self._text(key), as_, exported, self._attributes(key, as_, exported)):
                        names.add(as_)
                if names:  # module-level assignments from the API: `ACC = plgpu.ACC`
                    for m in _ASSIGN_RE.finditer(self._text(key)):
                        if any(w.decode("ascii", "replace") in names for w in _IDENT_RE.findall(m.group(2))):
                            names.add(m.group(1).decode("ascii", "replace"))
                changed |= len(names) != before

    def api_names(self, path: Path | str) -> set[str]:
        """The names a module binds to the API (imported from JAX or re-exported from another
        user module, or assigned from an expression that uses such a name)."""
        key = _key(path)
        if key not in self._api:
            self._solve([key])
        return self._api[key]

    def may_export(self, importer: str, module: str, name: str) -> bool:
        """Can `from module import name` (`import module` when name is empty; dots for relative
        imports) in `importer` bring in an API object? Unknown modules (not the user's) cannot."""
        level = len(module) - len(module.lstrip("."))
        source = self._resolve(importer, level, module[level:])
        if source is not None:
            exported = self.api_names(source)
            if not name or name == "*":
                return bool(exported)
            if name in exported or "*" in exported:
                return True
        if name:
            sub = self._resolve(importer, level, f"{module[level:]}.{name}" if module[level:] else name)
            return sub is not None and bool(self.api_names(sub))
        return False

    def _imports_api_itself(self, key: str) -> bool:
        """Does the module import the API itself, or spell it out (asked once per file)?"""
        if key not in self._direct:
            data = self._text(key)
            self._direct[key] = _has_keyword(data) and bool(_SPELLED_OUT_RE.search(data) or any(
                imports_api(imp) for imp in self._imports_of(key)))
        return self._direct[key]

    def is_relevant(self, path: Path | str) -> bool:
        key = _key(path)
        return self._imports_api_itself(key) or bool(self.api_names(key))

    def relevant(self, paths: Iterable[Path | str]) -> set[str]:
        """The absolute paths, among `paths`, that must be analysed. A file that imports the API
        itself needs no walk of its imports (one kernel file: nothing else is read)."""
        keys = list(dict.fromkeys(_key(p) for p in paths))
        direct = {k for k in keys if self._imports_api_itself(k)}
        rest = [k for k in keys if k not in direct]
        self._solve(rest)
        return direct | {k for k in rest if self.api_names(k)}

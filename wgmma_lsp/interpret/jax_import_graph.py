"""The packages outside JAX that importing a JAX module needs, read from JAX's files (never imported).

`import jax.experimental.pallas.mosaic_gpu` runs that module and every module it imports, their
parents first. On JAX 0.10.2 one of them (`jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py`)
does `from absl import logging` at module level, and jax does not require absl-py: without it, the
import fails with `ModuleNotFoundError: No module named 'absl'` before any kernel is traced.

`events(module)` lists, in the order Python runs them, the imports of packages outside JAX (and
outside the standard library) that importing `module` executes, each with the module and line that
imports it and how it is guarded:

- `None`: a statement of the module's body itself (column 0): it runs whenever the module runs;
- `"caught"`: inside a module-level `try` whose handler catches `ImportError` and does not raise;
- `"uncertain"`: any other module-level compound statement (an `if`, a `try` that re-raises, ...).

How: each file of the `jax` package is scanned for its import statements at column 0 (each parsed
alone by `ast`: a scan, not a parse of the file), its JAX modules followed depth first as Python
imports them (a parent package before its submodule, an imported name that is a submodule after
its package). Imports inside a module-level compound statement are read with `ast`, only in the
files whose indented lines import such a package: JAX modules imported there are not followed
(that the walk may miss some imports only costs findings). An import written at column 0 inside a
string is no statement: the model re-reads the importing file with `ast` before it reports
(models/jax_imports.py), and nothing is said when the statement is not there.

The events of each module asked for are kept in the user cache directory, one file per analysed
JAX (its version, its path, this file's source): a walk reads about 270 files (20-40 ms). The
cache is only trusted to say that nothing is missing; a missing package is confirmed by a fresh
walk (`events(module, fresh=True)`).
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from wgmma_lsp import logs, observed, user_cache
from wgmma_lsp.digest import blake2b
from wgmma_lsp.interpret.jax_source_read import jax_root
from wgmma_lsp.lazy_re import LazyPattern

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from wgmma_lsp.named_tuple import NamedTuple

log = logs.logger()

_LINE = LazyPattern(r"^(?:from|import)[ \t]", re.MULTILINE)
_INDENTED = LazyPattern(r"^[ \t]+(?:from|import)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_MAX_DEPTH = 100  # import chains deeper than this are not followed (nothing is said); JAX's: 12
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


class Event(NamedTuple):
    """An import of package `name` (outside JAX), by module `via` at `line` (1-based)."""

    name: str
    via: str
    line: int
    guard: str | None  # None, "caught", "uncertain", "in-sys-modules:<pkg>" (see _guarded)


def _standard(name: str) -> bool:
    return name in sys.stdlib_module_names or name == "__future__"


def _module_path(root: Path, dotted: str, known: dict[tuple[str, str], Path | None] | None = None) -> Path | None:
    if known is not None:
        key = (str(root), dotted)
        if key not in known:
            known[key] = _module_path(root, dotted)
        return known[key]
    parts = dotted.split(".")
    if parts[0] != "jax":
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if observed.isfile(candidate):
            return candidate
    return None


def _statement_at(text: str, start: int) -> str:
    """The import statement that starts at `start` (a parenthesised or continued one in full)."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    line = text[start:end]
    if "(" in line and ")" not in line:
        close = text.find(")", end)
        return text[start:close + 1] if close >= 0 else line
    while line.rstrip().endswith("\\") and end < len(text):
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        line = line.rstrip()[:-1] + " " + text[end + 1:nxt]
        end = nxt
    return line


def _top_level(text: str) -> list[tuple[int, ast.stmt]]:
    """The import statements written at column 0, with their line numbers (parsed together; one
    by one when that fails: an `import` line of prose in a string is no statement)."""
    found = []
    line, pos = 1, 0
    for m in _LINE.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        found.append((line, _statement_at(text, pos)))
    try:
        body = ast.parse("\n".join(stmt for _, stmt in found)).body
        if len(body) == len(found):
            return [(line, node) for (line, _), node in zip(found, body)]
    except (SyntaxError, ValueError):
        pass  # one of them is not a statement: each alone below
    out = []
    for line, stmt in found:
        try:
            out.append((line, ast.parse(stmt).body[0]))
        except (SyntaxError, ValueError, IndexError):
            continue  # not a statement (prose in a string): no import
    return out


_HEADER = LazyPattern(r"[ \t]*(?:async[ \t]+def|def|class|@)\b")


def _in_def(text: str, at: int) -> bool:
    """Is the indented line at `at` in a function or class body? Read from the lines above it
    with less indentation (its headers). A guess that errs towards "no" (then the file is
    parsed): a line of a string less indented than the import stops the walk up."""
    line_start = at
    indent = len(text[at:text.find("\n", at) if "\n" in text[at:] else len(text)]) \
        - len(text[at:text.find("\n", at) if "\n" in text[at:] else len(text)].lstrip())
    while line_start > 0 and indent > 0:
        prev_end = line_start - 1
        prev_start = text.rfind("\n", 0, prev_end) + 1
        line = text[prev_start:prev_end]
        line_start = prev_start
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        width = len(line) - len(stripped)
        if width < indent:
            if _HEADER.match(line):
                return True
            indent = width
    return False


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    if handler.type is None:
        return not any(isinstance(n, ast.Raise) for n in ast.walk(handler))
    names = {k.id if isinstance(k, ast.Name) else k.attr if isinstance(k, ast.Attribute) else ""
             for k in kinds}
    return bool(names & _IMPORT_ERRORS) and not any(isinstance(n, ast.Raise) for n in ast.walk(handler))


def _catching(node: ast.AST) -> bool:
    """A `try` whose every handler catches `ImportError` and none raises."""
    return isinstance(node, ast.Try) and bool(node.handlers) \
        and all(_catches_import_error(h) for h in node.handlers)


def _sys_modules_test(test: ast.expr, bound: dict[str, ast.expr],
                      elsewhere: Callable[[str, str], str | None]) -> str | None:
    """`"pkg.mod" in sys.modules`, or a module-level name bound to it, here or in another JAX
    module (`colab_lib.IS_COLAB_ENABLED`: `elsewhere("colab_lib", "IS_COLAB_ENABLED")`): the top
    package's name."""
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
        return elsewhere(test.value.id, test.attr)
    if isinstance(test, ast.Name) and test.id in bound:
        test = bound[test.id]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
            and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str) \
            and isinstance(c := test.comparators[0], ast.Attribute) and c.attr == "modules" \
            and isinstance(c.value, ast.Name) and c.value.id == "sys":
        return test.left.value.split(".")[0]
    return None


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name) and test.value.id == "typing")


def sys_modules_flags(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to `"pkg.mod" in sys.modules`: name -> `pkg`."""
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            pkg = _sys_modules_test(stmt.value, {}, lambda alias, attr: None)
            if pkg is not None:
                out.update((t.id, pkg) for t in stmt.targets if isinstance(t, ast.Name))
    return out


def _guarded(text: str, names: set[str],
             elsewhere: Callable[[str, str], str | None]) -> list[tuple[int, str, str | None]]:
    """(line, package, guard) of the imports of `names` inside module-level compound statements
    (not in a function or class body). Guards: `"caught"`, `"uncertain"`, `None` (the `else` of
    `if TYPE_CHECKING:`, which always runs) and `"in-sys-modules:<pkg>"` (under
    `if "pkg.mod" in sys.modules:` — not run where `pkg` is not installed)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, str | None]] = []
    bound = {t.id: stmt.value for stmt in tree.body if isinstance(stmt, ast.Assign)
             for t in stmt.targets if isinstance(t, ast.Name)}

    def block(stmts: list[ast.stmt], guard: str | None) -> None:
        for stmt in stmts:
            one(stmt, guard)

    def one(node: ast.AST, guard: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.extend((node.lineno, name, guard) for name in _packages(node) if name in names)
        elif _catching(node):
            block(node.body, "caught")
            for part in [*node.handlers, *node.orelse, *node.finalbody]:
                one(part, "uncertain")
        elif isinstance(node, ast.If) and guard is None and _type_checking(node.test):
            block(node.orelse, None)  # its body never runs
        elif isinstance(node, ast.If) and guard is None \
                and (pkg := _sys_modules_test(node.test, bound, elsewhere)) is not None:
            block(node.body, f"in-sys-modules:{pkg}")
            block(node.orelse, "uncertain")
        else:
            inner = guard if guard == "caught" and not isinstance(node, ast.Try) else "uncertain"
            for child in ast.iter_child_nodes(node):
                one(child, inner)

    for stmt in tree.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            one(stmt, None)
    return out


def _packages(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The top-level packages outside JAX an import statement names (absolute imports only)."""
    if isinstance(node, ast.Import):
        tops = [a.name.split(".")[0] for a in node.names]
    elif node.level == 0 and node.module:
        tops = [node.module.split(".")[0]]
    else:
        tops = []
    return [t for t in tops if t != "jax" and not _standard(t)]


#: The imports of each file scanned in this process, by (path, mtime, size); what
#: `_module_path` found, by (package folder, module): both dropped when the analysed JAX changes.
_scans: dict[tuple[str, int, int], list[tuple[int, object]]] = {}
_paths: dict[tuple[str, str], Path | None] = {}
_MAX_SCANS = 4096


def _forget() -> None:
    _scans.clear()
    _paths.clear()


_hooked = False


def _hook() -> None:
    """Drop the kept scans when the analysed JAX changes (environment.on_change), once."""
    global _hooked
    if not _hooked:
        from wgmma_lsp import environment

        environment.on_change(_forget)
        _hooked = True


class _Walk:
    """One depth-first walk of the imports that importing a module runs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: set[str] = set()
        self.seen_outside: set[str] = set()
        self.out: list[Event] = []
        self.flags: dict[str, dict[str, str]] = {}
        self.complete = True

    def module(self, dotted: str, depth: int = 0) -> None:
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in self.seen:
                continue
            self.seen.add(name)
            path = _module_path(self.root, name, _paths)
            if path is None:
                return  # not a module of this JAX (a name, or missing: WG110's business)
            if depth > _MAX_DEPTH:
                self.complete = False
                return
            self._run(name, path, depth)

    def _scan(self, path: Path, package: str) -> list[tuple[int, object]] | None:
        """The imports of one file, in order: kept per file (by its stamp) for the process, since
        a `check` walks from each JAX module its files import, over mostly the same files."""
        try:
            st = os.stat(path)  # observed: the text is read through observed when it is scanned
        except OSError:
            return None
        stamp = (str(path), st.st_mtime_ns, st.st_size)
        items = _scans.get(stamp)
        if items is not None:
            return items
        try:
            text = observed.read_text(path, errors="replace")
        except OSError:
            return None
        items = [(line, node) for line, node in _top_level(text)]
        outside = {m.group(1) for m in _INDENTED.finditer(text)
                   if m.group(1) != "jax" and not _standard(m.group(1)) and not _in_def(text, m.start())}
        if outside:
            aliases = self._aliases(items, package)
            found = _guarded(text, outside, lambda alias, attr: self._flag(aliases.get(alias), attr))
            items += [(line, (name, guard)) for line, name, guard in found]
        items.sort(key=lambda item: item[0])
        if len(_scans) >= _MAX_SCANS:
            _scans.clear()
        _scans[stamp] = items
        return items

    def _run(self, dotted: str, path: Path, depth: int) -> None:
        package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
        items = self._scan(path, package)
        if items is None:
            self.complete = False
            return
        for line, item in items:
            if isinstance(item, tuple):
                self._outside(item[0], dotted, line, item[1])
            elif isinstance(item, ast.Import):
                for alias in item.names:
                    top = alias.name.split(".")[0]
                    if top == "jax":
                        self.module(alias.name, depth + 1)
                    elif not _standard(top):
                        self._outside(top, dotted, line, None)
            elif isinstance(item, ast.ImportFrom):
                self._from(item, package, dotted, line, depth)

    def _aliases(self, items: list[tuple[int, object]], package: str) -> dict[str, str]:
        """The JAX modules the column-0 imports bind to names: name -> module."""
        out = {}
        for _, node in items:
            if isinstance(node, ast.Import):
                out.update((a.asname, a.name) for a in node.names if a.asname)
            elif isinstance(node, ast.ImportFrom):
                target = self._target(node, package)
                if target:
                    out.update((a.asname or a.name, f"{target}.{a.name}") for a in node.names)
        return out

    def _flag(self, module: str | None, name: str) -> str | None:
        """`module.name`, when module-level `name = "pkg.mod" in sys.modules` there: `pkg`."""
        path = _module_path(self.root, module, _paths) if module else None
        if path is None:
            return None
        if module not in self.flags:
            try:
                text = observed.read_text(path, errors="replace")
                self.flags[module] = sys_modules_flags(ast.parse(text)) if "sys.modules" in text else {}
            except (OSError, SyntaxError, ValueError):
                self.flags[module] = {}
        return self.flags[module].get(name)

    @staticmethod
    def _target(node: ast.ImportFrom, package: str) -> str | None:
        """The module `from … import` names, relative ones resolved (None: above the top)."""
        if not node.level:
            return node.module or ""
        base = package.split(".")
        if node.level - 1 > len(base) - 1:
            return None
        base = base[:len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _from(self, node: ast.ImportFrom, package: str, dotted: str, line: int, depth: int) -> None:
        target = self._target(node, package)
        if target is None:
            return
        top = target.split(".")[0]
        if top != "jax":
            if top and not _standard(top):
                self._outside(top, dotted, line, None)
            return
        self.module(target, depth + 1)
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if alias.name != "*" and sub not in self.seen and _module_path(self.root, sub, _paths) is not None:
                self.module(sub, depth + 1)

    def _outside(self, name: str, via: str, line: int, guard: str | None) -> None:
        if name in self.seen_outside:
            return  # imported already: it worked, or failed there
        if guard is None:
            self.seen_outside.add(name)
        self.out.append(Event(name, via, line, guard))


def walk(dotted: str, root: Path | None = None) -> list[Event] | None:
    """The events of importing `dotted` (read now from the files); None when it cannot be told."""
    root = root if root is not None else jax_root()
    if root is None or dotted.split(".")[0] != "jax":
        return None
    _hook()
    w = _Walk(root)
    try:
        w.module(dotted)
    except RecursionError:  # called deep in an analysis: not walked, nothing said
        log.info("imports of %s not followed: the analysis is too deep here", dotted)
        return None
    return w.out if w.complete else None


# -- the cache --------------------------------------------------------------------------------

_memory: dict[str, list[Event] | None] = {}
_memory_key: str | None = None


_own_source: bytes | None = None


def _key(root: Path) -> str:
    from wgmma_lsp import environment

    global _own_source
    if _own_source is None:
        _own_source = Path(__file__).read_bytes()  # observed: wgmma-lsp's own file (the tool digest)
    h = blake2b(digest_size=10)
    h.update(json.dumps([str(root), environment.active().jax_version]).encode())
    h.update(_own_source)
    return h.hexdigest()


def _cache_file(key: str) -> Path:
    return user_cache.cache_dir() / f"jax-imports-{key}.json"


def _load(key: str) -> dict[str, list[Event] | None]:
    path = _cache_file(key)
    try:
        raw = path.read_text(encoding="utf-8")  # observed: its own entry; a finding is confirmed on JAX's files
    except FileNotFoundError:
        return {}
    except OSError as e:
        log.warning("JAX import cache %s cannot be read (%s): JAX's files are read", path, e)
        return {}
    try:
        data = json.loads(raw)
        return {m: None if evs is None else [Event(*e) for e in evs] for m, evs in data.items()}
    except (ValueError, TypeError, AttributeError) as e:
        log.warning("JAX import cache %s is corrupt and was ignored (%s: %s)", path, type(e).__name__, e)
        return {}


def _store(key: str, table: dict[str, list[Event] | None]) -> None:
    path = _cache_file(key)
    data = {m: None if evs is None else [list(e) for e in evs] for m, evs in table.items()}
    try:
        user_cache.write_json(path, data, ".jax-imports-")
    except OSError as e:
        log.info("JAX import cache %s not written (%s): only the speed is lost", path, e)


def events(dotted: str, fresh: bool = False) -> list[Event] | None:
    """The events of importing `dotted` from the analysed JAX: from the cache (filled on first
    use), or read now with `fresh`. None: no JAX, not a JAX module, or the walk was incomplete."""
    global _memory, _memory_key
    root = jax_root()
    if root is None:
        return None
    if fresh:
        return walk(dotted, root)
    key = _key(root)
    if key != _memory_key:
        _memory, _memory_key = _load(key), key
    if dotted not in _memory:
        _memory[dotted] = walk(dotted, root)
        _store(key, {**_load(key), dotted: _memory[dotted]})
    return _memory[dotted]

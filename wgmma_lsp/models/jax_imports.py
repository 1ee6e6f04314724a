"""Imports of JAX modules and names that the analysed JAX does not have. Python's import system
raises them before any kernel is traced: `ModuleNotFoundError` (WG110, rules/module_missing.py)
and `ImportError` (WG111, rules/import_name_missing.py), in CPython's own words.

The typical case: code written for JAX 0.12.1's `jax.pallas` / `jax.pallas.mosaic_gpu` (the paths
its documentation now uses) opened where an older JAX is installed, or a name JAX removed
(`from jax.experimental.pallas.mosaic_gpu import transpose_ref` on 0.12.1).

Decided from the analysed JAX's files (never by importing it), and only where absence is proven:

- a module `jax.a.b`: the first prefix whose parent package's folder has no entry `b` (a package
  or a namespace folder) and no file `b.*` (source, bytecode or extension module): where the
  path-based finder of `jax.__path__` would look;
- a name in `from M import name`, where M has no submodule `name`:
  - for the Pallas modules whose exports are read (the table WG091 uses): a name `_deprecations`
    lists as removed, or a name neither exported nor spelled anywhere in M's source (nor in a
    module M star-imports: an `import typing` binds a name the table does not list);
  - for another package of JAX: its `__init__.py` never spells the name, has no `import *` and
    defines no `__getattr__` function.

With no JAX in the analysed environment (facts bundled for the newest JAX), nothing is said:
the files are not there to look at.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from wgmma_lsp import observed
from wgmma_lsp.interpret import env_packages, jax_import_graph, jax_source
from wgmma_lsp.interpret.jax_source_read import jax_root, module_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any
    from wgmma_lsp.interpret.host import ModelHost
    from wgmma_lsp.rules.base import Rule
    from wgmma_lsp.spans import Span

_STAR_DEPTH = 4  # as jax_source_read follows star imports


def _listing(folder: Path) -> list[str] | None:
    try:
        return observed.listdir(folder)
    except OSError:
        return None


def _has_entry(folder: Path, name: str) -> bool | None:
    """Could the path finder find module `name` in `folder`? None: the folder cannot be read."""
    names = _listing(folder)
    if names is None:
        return None
    prefix = name + "."
    return any(n == name or n.startswith(prefix) for n in names)


def missing_module(dotted: str) -> str | None:
    """`ModuleNotFoundError`'s text for `import dotted` (or `from dotted import ...`) when a
    package of it is not in the analysed JAX; None when it is there or cannot be known."""
    parts = dotted.split(".")
    root = jax_root()
    if parts[0] != "jax" or len(parts) < 2 or root is None:
        return None
    folder = root
    for i, part in enumerate(parts[1:], start=2):
        found = _has_entry(folder, part)
        if found is None:
            return None
        if not found:
            return f"No module named {'.'.join(parts[:i])!r}"
        folder = folder / part
        if not observed.isdir(folder):
            return None  # a module file: what is below it is another error, not followed
    return None


def _first_missing(events: list[jax_import_graph.Event], table: dict) -> jax_import_graph.Event | None:
    """The import that fails first, where that is proven: a package the environment lacks,
    imported where nothing catches it, with every earlier import of a missing package caught or
    not run. None when none fails, or when which one fails cannot be told."""
    opened: list[str] = []  # the packages outside JAX imported so far: what they import is unseen
    for e in events:
        found = env_packages.importable(e.name, table)
        if found is None:
            return None
        if found:
            opened.append(e.name)
            continue
        if e.guard == "caught":
            continue
        if e.guard is None:
            # One of them may import it first, from its own modules or an extension's code (with
            # jaxlib's words for numpy): only what none of them requires is proven.
            for package in opened:
                needs = env_packages.requirements(package, table)
                if needs is None or env_packages.may_provide(needs, e.name):
                    return None
            return e
        if e.guard.startswith("in-sys-modules:"):
            # `if "pkg.mod" in sys.modules:` — nothing of a package not installed is imported
            if env_packages.importable(e.guard.partition(":")[2], table) is False:
                continue
        return None
    return None


def _written(e: jax_import_graph.Event) -> bool:
    """Is the import of `e` a statement of its module's body (not prose in a string)?"""
    text = jax_source.read_source(e.via)
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError):
        return False
    for node in tree.body if tree is not None else ():
        if node.lineno == e.line and isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            return not getattr(node, "level", 0) and any(n.split(".")[0] == e.name for n in names)
    return False


def missing_dependency(dotted: str) -> str | None:
    """See `_missing_dependency` (kept while the analysed environment is unchanged)."""
    table = env_packages.answers()
    return env_packages.remembered(table, "missing_dependency", dotted,
                                   lambda: _missing_dependency(dotted, table))


def _missing_dependency(dotted: str, table: dict | None = None) -> str | None:
    """`ModuleNotFoundError`'s text when importing JAX's module `dotted` imports a package outside
    JAX that the analysed environment lacks (`No module named 'absl'`); None when it works or
    cannot be told. The cached walk only says that nothing is missing: a miss is confirmed on
    JAX's files as they are, and on the statement itself."""
    table = env_packages.answers() if table is None else table
    events = jax_import_graph.events(dotted)
    if not events or _first_missing(events, table) is None:
        return None
    fresh = jax_import_graph.events(dotted, fresh=True)
    first = _first_missing(fresh, table) if fresh else None
    if first is None or not _written(first):
        return None
    return f"No module named {first.name!r}"


def _words(dotted: str, depth: int = 0) -> str | None:
    """The source of module `dotted` and of the modules it star-imports (None: unreadable)."""
    text = jax_source.read_source(dotted)
    if text is None or depth > _STAR_DEPTH:
        return None
    out = [text]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            if node.level or not node.module:
                return None
            more = _words(node.module, depth + 1)
            if more is None:
                return None
            out.append(more)
    return "\n".join(out)


def _spelled(name: str, text: str) -> bool:
    """Does `text` hold `name` as a word anywhere (code, strings, comments)? Then some statement
    may bind it: not proven missing."""
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def missing_name(module: str, name: str) -> str | None:
    """`ImportError`'s text for `from module import name` when the analysed JAX's `module`
    (found) neither binds `name` nor has such a submodule; None when it may, or cannot be known."""
    root = jax_root()
    if root is None or not module.startswith("jax") or name.startswith("_") or name == "*":
        return None
    path = module_file(module)
    if path is None:
        return None
    if path.name == "__init__.py":
        has_sub = _has_entry(path.parent, name)
        if has_sub is None or has_sub:
            return None
    table = jax_source.exports_of(module)
    if table is not None:
        exp = table.get(name)
        if exp is not None and exp.removed_message is None:
            return None  # exported, or deprecated and still served
        if exp is None:
            text = _words(module)
            if text is None or _spelled(name, text):
                return None
    else:
        text = jax_source.read_source(module)
        if text is None or _spelled(name, text) or "import *" in text \
                or re.search(r"^\s*def __getattr__\b", text, re.MULTILINE):
            return None
    return f"cannot import name {name!r} from {module!r} ({path})"


def _module_span(interp: ModelHost, s: ast.ImportFrom) -> Span:
    """The module's name in `from <module> import ...` (its statement when not found as written)."""
    from wgmma_lsp.spans import Span

    span = interp.span(s)
    line = interp.lines.lines[span.line] if span.line < len(interp.lines.lines) else ""
    at = line.find(s.module or "", span.col)
    if at < 0 or not s.module:
        return span
    return Span(span.line, at, span.line, at + len(s.module))


def _report(interp: ModelHost, rule: Rule, message: str, span: Span, line: int,
            data: dict[str, Any] | None = None) -> None:
    """Report, unless an enclosing `try` catches the error: a fallback import for other JAX
    versions is the code's intent, not a hazard (the handler's path is then the one taken)."""
    if interp.may_be_caught(rule, message):
        return
    interp.report(rule, message, span, line, data=data)


#: JAX 0.12.1's paths of the Pallas API, and the ones every supported JAX has.
_NEW_PATH, _OLD_PATH = "jax.pallas", "jax.experimental.pallas"


def older_spelling(dotted: str) -> str | None:
    """`jax.pallas[.mosaic_gpu…]` as `jax.experimental.pallas[…]`, where the analysed JAX has that
    module's file (the quick fix of WG110); None otherwise."""
    if dotted != _NEW_PATH and not dotted.startswith(_NEW_PATH + "."):
        return None
    alt = _OLD_PATH + dotted[len(_NEW_PATH):]
    return alt if module_file(alt) is not None else None


def _name_span(span: Span, name: str) -> Span | None:
    """The span of `name` where `span` (a one-line alias, or `from <name> import`) starts with it."""
    from wgmma_lsp.spans import Span

    if span.line != span.end_line or span.end_col - span.col < len(name):
        return None
    return Span(span.line, span.col, span.line, span.col + len(name))


def _report_dependency(interp: ModelHost, message: str, span: Span, line: int) -> None:
    """WG110 for a package outside JAX the import needs: once per document (Python stops at the
    first import that fails; the analysis goes on as if it had worked)."""
    from wgmma_lsp.rules import module_missing

    if not any(f.rule is module_missing.RULE and f.message == message for f in interp.findings):
        _report(interp, module_missing.RULE, message, span, line)


def check_import(interp: ModelHost, s: ast.Import | ast.ImportFrom) -> None:
    """Report WG110 / WG111 for an import statement the analysed document runs (the interpreter
    asks only there: not for another module's code, nor while quiet)."""
    if isinstance(s, ast.Import):
        for alias in s.names:
            if alias.name.startswith("jax.") and (message := missing_module(alias.name)) is not None:
                from wgmma_lsp.rules import module_missing

                span = interp.span(alias)
                # `import jax.pallas as pl` only: without `as`, the code says `jax.pallas.…`
                alt = older_spelling(alias.name) if alias.asname else None
                data = {"module_span": _name_span(span, alias.name), "replacement": alt} \
                    if alt is not None else None
                _report(interp, module_missing.RULE, message, span, s.lineno - 1, data)
            elif (alias.name == "jax" or alias.name.startswith("jax.")) \
                    and (message := missing_dependency(alias.name)) is not None:
                _report_dependency(interp, message, interp.span(alias), s.lineno - 1)
                return
        return
    if s.level or not s.module or not (s.module == "jax" or s.module.startswith("jax.")):
        return
    message = missing_module(s.module)
    if message is not None:
        from wgmma_lsp.rules import module_missing

        span = _module_span(interp, s)
        alt = older_spelling(s.module)
        data = {"module_span": span, "replacement": alt} if alt is not None else None
        _report(interp, module_missing.RULE, message, span, s.lineno - 1, data)
        return
    if (message := missing_dependency(s.module)) is not None:
        _report_dependency(interp, message, _module_span(interp, s), s.lineno - 1)
        return
    for alias in s.names:
        sub = f"{s.module}.{alias.name}"
        if alias.name != "*" and module_file(sub) is not None:
            if (message := missing_dependency(sub)) is not None:
                _report_dependency(interp, message, interp.span(alias), s.lineno - 1)
                return
            continue
        if (message := missing_name(s.module, alias.name)) is not None:
            from wgmma_lsp.rules import import_name_missing

            # Python raises for the first name it cannot import: the rest are not looked at.
            data = None
            if s.module == "jax" and [a.name for a in s.names] == ["pallas"] \
                    and module_file(_OLD_PATH) is not None:  # `from jax import pallas as pl`
                data = {"module_span": _module_span(interp, s), "replacement": "jax.experimental"}
            _report(interp, import_name_missing.RULE, message, interp.span(alias), s.lineno - 1, data)
            return

"""Classes of installed third-party packages, read from their source for what `isinstance` needs.

A module the program layer does not read (a third-party package in site-packages, such as
`qwix`) gives the interpreter names it knows nothing about (`values.ForeignName`). Library code
asks of them mostly one thing: `isinstance(x, qwix.QArray)`, where `x` is a JAX array, a
`jax.ShapeDtypeStruct`, a tuple or a number the interpreter made. Those objects' types are
JAX's, NumPy's or Python's own, none of them a subclass of a third-party class, so the answer
is False — unless the class decides `isinstance` itself: a metaclass with `__instancecheck__`
(ABCs, whose `register` makes anything an instance; `typing.Protocol`; enums; `TypedDict`,
which raises).

So a class is **plain** when its source proves its metaclass is `type`: one top-level `class`
statement binds it (reached through `from m import C` and `C = m.C` re-exports), without a
`metaclass=` keyword or an `__instancecheck__`/`__subclasshook__` of its own, each decorator one
that returns the class it is given (`dataclasses.dataclass`, `flax.struct.dataclass`,
`functools.total_ordering`, `typing.final`, jax's pytree registrations), each base `object`, a
builtin type, `typing.Generic`/`NamedTuple`, or a plain class itself. Anything else — a name
bound twice or under an `if`/`try`, a base read from an unknown module, a call — is not known
plain, and `isinstance` stays undecided. Files are parsed, never imported; only the analysed
environment's site-packages are read.
"""

from __future__ import annotations

import ast
import functools
import os

from wgmma_lsp import logs
from wgmma_lsp import observed

log = logs.logger()

MAX_DEPTH = 8  # re-exports and bases followed
MAX_FILE_BYTES = 2_000_000

#: Decorators that hand back the class they are given, its metaclass unchanged.
PLAIN_DECORATORS = frozenset({
    "dataclasses.dataclass", "flax.struct.dataclass", "functools.total_ordering", "typing.final",
    "typing_extensions.final", "jax.tree_util.register_pytree_node_class",
    "jax.tree_util.register_dataclass", "jax.tree_util.register_static", "functools.partial",
    "jax._src.util.set_module",  # (sets `__module__`, returns the class: jax's ShapeDtypeStruct)
})
#: Bases whose metaclass is `type` (instances of builtin types are never instances of a
#: subclass of them defined elsewhere).
PLAIN_BASES = frozenset({
    "builtins.object", "builtins.int", "builtins.float", "builtins.str", "builtins.bytes",
    "builtins.tuple", "builtins.list", "builtins.dict", "builtins.set", "builtins.frozenset",
    "builtins.Exception", "builtins.ValueError", "builtins.TypeError", "builtins.RuntimeError",
    "typing.Generic", "typing.NamedTuple", "typing_extensions.NamedTuple",
})
_BUILTIN_NAMES = {b.split(".", 1)[1] for b in PLAIN_BASES if b.startswith("builtins.")}


def site_dirs() -> tuple[str, ...]:
    """The analysed environment's site-packages folders (environment.py)."""
    from wgmma_lsp.environment import active, environment_site_dirs

    prefix = active().prefix
    return tuple(str(p) for p in environment_site_dirs(prefix)) if prefix is not None else ()


def is_plain_class(dotted: str) -> bool:
    """Whether the class `dotted` (`qwix.QArray`) of an installed package is plain (above)."""
    return _plain(dotted, site_dirs(), 0)


@functools.lru_cache(maxsize=512)
def _plain(dotted: str, roots: tuple[str, ...], depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    found = _find(dotted, roots, depth)
    if found is None:
        return False
    path, node, imports = found
    if not isinstance(node, ast.ClassDef):
        return False
    if any(k.arg == "metaclass" or k.arg is None for k in node.keywords):
        return False
    if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
           and s.name in ("__instancecheck__", "__subclasshook__") for s in node.body):
        return False
    module = _module_of(path, roots)
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = _dotted_name(target, imports)
        if name not in PLAIN_DECORATORS:
            return False
        if name == "functools.partial":  # `@functools.partial(jax.tree_util.register_dataclass, ...)`
            first = deco.args[0] if isinstance(deco, ast.Call) and deco.args else None
            if first is None or _dotted_name(first, imports) not in PLAIN_DECORATORS - {"functools.partial"}:
                return False
    for base in node.bases:
        expr = base.value if isinstance(base, ast.Subscript) else base  # `Generic[T]`
        name = _dotted_name(expr, imports)
        if name is None:
            return False
        if name in PLAIN_BASES:
            continue
        if "." not in name and module is not None:
            name = f"{module}.{name}"  # a class of the same module
        if not _plain(name, roots, depth + 1):
            return False
    return True


def _find(dotted: str, roots: tuple[str, ...], depth: int) -> tuple[str, ast.AST, dict[str, str]] | None:
    """(file, the statement that binds the name, the file's import table) for `pkg.mod.Name`."""
    parts = dotted.split(".")
    if len(parts) < 2 or depth > MAX_DEPTH or not all(p.isidentifier() for p in parts):
        return None
    for cut in range(len(parts) - 1, 0, -1):
        path = _module_path(parts[:cut], roots)
        if path is None:
            continue
        rest = parts[cut:]
        if len(rest) != 1:
            return None  # `pkg.mod.Class.Inner`, or a submodule not on disk
        parsed = _parse(path)
        if parsed is None:
            return None
        tree, imports, bindings = parsed
        node = bindings.get(rest[0])
        if node is None:
            return None
        if isinstance(node, ast.ClassDef):
            return path, node, imports
        target = imports.get(rest[0]) if isinstance(node, ast.ImportFrom) else \
            _dotted_name(node.value, imports) if isinstance(node, ast.Assign) else None
        if target is None:
            return None
        if "." not in target:
            module = _module_of(path, roots)
            target = f"{module}.{target}" if module else target
        return _find(target, roots, depth + 1)
    return None


def _module_path(parts: list[str], roots: tuple[str, ...]) -> str | None:
    for root in roots:
        base = os.path.join(root, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if observed.isfile(candidate):
                return candidate
    return None


def _module_of(path: str, roots: tuple[str, ...]) -> str | None:
    """The dotted module name of a file under one of the roots."""
    for root in roots:
        rel = os.path.relpath(path, root)
        if rel.startswith(".."):
            continue
        parts = rel[:-3].split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)
    return None


@functools.lru_cache(maxsize=256)
def _parse_cached(path: str, mtime_ns: int, size: int) -> tuple[ast.Module, dict[str, str], dict[str, ast.AST]] | None:
    try:
        with open(path, "rb") as f:  # observed: _parse stamped it (observed.stat)
            source = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        log.info("wgmma-lsp: could not read %s: %s", path, e)
        return None
    if len(source) > MAX_FILE_BYTES:
        return None
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as e:
        log.info("wgmma-lsp: could not parse %s: %s", path, e)
        return None
    package = _package_of(path)
    imports: dict[str, str] = {}
    bindings: dict[str, ast.AST] = {}
    bound_twice: set[str] = set()

    def bind(name: str, node: ast.AST) -> None:
        if name in bindings:
            bound_twice.add(name)
        bindings[name] = node

    for s in tree.body:
        if isinstance(s, ast.Import):
            for a in s.names:
                local = a.asname or a.name.split(".")[0]
                imports[local] = a.name if a.asname else local
                bind(local, s)
        elif isinstance(s, ast.ImportFrom):
            base = _absolute(s, package)
            for a in s.names:
                if a.name == "*" or base is None:
                    continue
                imports[a.asname or a.name] = f"{base}.{a.name}"
                bind(a.asname or a.name, s)
        elif isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bind(s.name, s)
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        bind(n.id, s if isinstance(s, ast.Assign) and len(s.targets) == 1
                             and isinstance(s.targets[0], ast.Name) else tree)
        else:  # `if`, `try`, `for`, `with` at the top: whatever they bind is not one statement's
            for n in ast.walk(s):
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    bind(n.name, tree)
                    bound_twice.add(n.name)
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    bound_twice.add(n.id)
                elif isinstance(n, ast.alias):
                    bound_twice.add(n.asname or n.name.split(".")[0])
    for name in bound_twice:
        bindings[name] = tree  # not one statement's: nothing is proven of it
    return tree, imports, bindings


def _parse(path: str) -> tuple[ast.Module, dict[str, str], dict[str, ast.AST]] | None:
    try:
        st = observed.stat(path)
    except OSError:
        return None
    return _parse_cached(path, st.st_mtime_ns, st.st_size)


def _package_of(path: str) -> list[str]:
    """The folders above `path` that are packages, outermost first (`[qwix, _src, core]`)."""
    out: list[str] = []
    d = os.path.dirname(path)
    for _ in range(MAX_DEPTH * 2):
        if not observed.isfile(os.path.join(d, "__init__.py")):
            break
        out.insert(0, os.path.basename(d))
        d = os.path.dirname(d)
    return out


def _absolute(s: ast.ImportFrom, package: list[str]) -> str | None:
    if not s.level:
        return s.module
    if s.level > len(package):
        return None
    base = package[:len(package) - s.level + 1]
    return ".".join(base + ([s.module] if s.module else []))


def _dotted_name(node: ast.expr, imports: dict[str, str]) -> str | None:
    """`a.b.c` through the file's imports (`struct.dataclass` with `from flax import struct` is
    `flax.struct.dataclass`); a bare builtin name is `builtins.<name>`; else the name as written."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = imports.get(node.id)
    if head is None:
        if not parts and node.id in _BUILTIN_NAMES:
            return f"builtins.{node.id}"
        head = node.id
    return ".".join([head, *parts])

"""What a package's `__init__.py` binds, read from its syntax: does `from pkg import name` give the
submodule `pkg/name.py` without running the `__init__`?

Python's answer (`importlib._bootstrap._handle_fromlist`): `pkg.name` is the attribute the
`__init__` left, and importing the submodule sets that attribute to the submodule — so unless the
`__init__` binds `name` to something else (`from .layer import layer`, `name = ...`, a `def`), or
may bind it in a way not seen here (a star import, a module `__getattr__`, `globals()`), the
value is the submodule. The program layer then reads the submodule alone: the `__init__` of a
large package (tokamax's imports every op) is not interpreted for each `from pkg import sub`, and
an `__init__` that imports its own submodules (`from . import host, kernel`) is no import cycle.
"""

from __future__ import annotations

import ast
import threading

from wgmma_lsp.bounded import put_newest

MAX_KEPT = 4096  # `__init__` texts whose bindings are kept (oldest dropped first)

_lock = threading.Lock()
_bindings: dict[str, frozenset[str] | None] = {}  # digest -> names bound otherwise (None: dynamic)


def leaves_submodule(text: str, digest: str, name: str, package: str) -> bool:
    """Does `from <package> import name` give the submodule, for an `__init__.py` of this text?
    `package`: the package's own name (its folder's name)."""
    with _lock:
        found = digest in _bindings
        bound = _bindings.get(digest)
    if not found:
        bound = _bound_otherwise(text, package)
        with _lock:
            put_newest(_bindings, digest, bound, MAX_KEPT)
    return bound is not None and name not in bound


def _bound_otherwise(text: str, package: str) -> frozenset[str] | None:
    """The names the module's code binds to something other than its own submodule of that
    name; None when it may bind names this does not see."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        s = todo.pop()
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if s.name == "__getattr__":
                return None
            out.add(s.name)
        elif isinstance(s, ast.ImportFrom):
            for a in s.names:
                if a.name == "*":
                    return None
                bound = a.asname or a.name
                own = a.name == bound and (
                    (s.level == 1 and not s.module)
                    or (s.level == 0 and s.module is not None and s.module.split(".")[-1] == package))
                if not own:
                    out.add(bound)
        elif isinstance(s, ast.Import):
            out.update(a.asname or a.name.split(".")[0] for a in s.names)
        else:
            for node in ast.walk(s):
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    out.add(node.id)
                elif isinstance(node, ast.Name) and node.id in ("globals", "vars", "setattr"):
                    return None
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out.add(node.name)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    todo.append(node)
    return frozenset(out)

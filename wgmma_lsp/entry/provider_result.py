"""A run that is only for a function's result, stopped once that result is known to be unknown.

The hover pass runs a module's autotuning-config provider in full for the configs it returns
(`entry/tuning_contexts.py`). Most build one collection and return it:

    configs = set()
    for block_kv in [64, 128]:
        ...
            if smem_bytes <= 227 * 1024:   # unknown: the arguments are
                configs.add(config)
    return configs

A change made on a path that may not run spoils a set (`interpret/mutation.py`: it has no order
to join the two paths' items by), and a spoiled container is unknown to every later read, for
good. When the name every `return` of the function returns is bound once, by a statement of
its body's top level, and nowhere else (no other assignment, loop target, `del`, `global`, nor
`nonlocal` in a nested function), what that name holds once bound is what the function
returns: once that object is spoiled, the result is unknown whatever the rest of the run does
(tokamax's attention SM100 provider spoils its set in its first iteration of 240, then spent a
piece's step budget, 0.2 s, on the rest). The run stops there (`ResultUnknown`), as a run the
step budget stops: what it recorded so far stays.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from wgmma_lsp.interpret.ast_walk import own_nodes
from wgmma_lsp.interpret.interp_base import Budget

if TYPE_CHECKING:
    from wgmma_lsp.interpret.interp import Interpreter
    from wgmma_lsp.interpret.values import FuncVal, Value


class ResultUnknown(Budget):
    """The function whose result a run is for will return an unknown value: the run stops."""


@contextlib.contextmanager
def stop_once_result_unknown(interp: Interpreter, func: FuncVal) -> Iterator[None]:
    """While the body runs, a run of `func` stops with `ResultUnknown` once the object its
    result name is bound to is spoiled (see the module doc). A function whose result is not
    such a name runs as before."""
    name = result_name(func.node)
    if name is None or interp.spoil_watch is not None:
        yield
        return
    node = func.node

    def watch(obj: Value) -> None:
        for frame in interp.stack:  # (the outermost run of `func`: the one its result is of)
            if frame.func is not None and frame.func.node is node:
                if frame.env is not None and frame.env.vars.get(name) is obj:
                    raise ResultUnknown(f"{func.name}() returns `{name}`, which is unknown")
                return

    interp.spoil_watch = watch
    try:
        yield
    finally:
        interp.spoil_watch = None


def result_name(node: ast.AST) -> str | None:
    """The local name every `return` of the function `node` returns, if it is bound once, by a
    plain assignment among the body's top-level statements, and nowhere else; else None."""
    if not isinstance(node, ast.FunctionDef):
        return None
    names: set[str] = set()
    for n in own_nodes(node):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if isinstance(n, ast.Return):
            if not isinstance(n.value, ast.Name):
                return None
            names.add(n.value.id)
    if len(names) != 1:
        return None
    name = names.pop()
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    if any(a is not None and a.arg == name for a in params):
        return None
    top = [s for s in node.body if _assigns(s, name)]
    if len(top) != 1 or _bindings(node, name) != 1:
        return None
    return name


def _assigns(stmt: ast.stmt, name: str) -> bool:
    """`name = ...` or `name: T = ...`."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name
    return isinstance(stmt, ast.AnnAssign) and stmt.value is not None \
        and isinstance(stmt.target, ast.Name) and stmt.target.id == name


def _bindings(node: ast.AST, name: str) -> int:
    """How many places in `node` (nested scopes included: a `nonlocal` there rebinds it; a
    `global` or `nonlocal` of the name anywhere counts as many) bind or delete `name`."""
    count = 0
    for n in ast.walk(node):
        if n is node:
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            count += 2
        elif _bound_name(n) == name:
            count += 1
    return count


def _bound_name(n: ast.AST) -> str | None:
    """The name the node binds or deletes, if it does."""
    if isinstance(n, ast.Name):
        return n.id if not isinstance(n.ctx, ast.Load) else None
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                      ast.MatchAs, ast.MatchStar)):
        return n.name
    if isinstance(n, ast.alias):
        return n.asname or n.name.split(".")[0]
    if isinstance(n, ast.MatchMapping):
        return n.rest
    return None

"""Combinations of a configuration sweep that repeat one already checked.

An iteration of a sweep is run with an observation log open (`interpret/observe.py`): it
learns which of the names the loop binds it read. A later combination is a repeat of a run
iteration when

- it binds the same values to every name that iteration observed (the others it never read),
- it starts from the same state: every name the body reads before assigning it that the body
  also assigns (a value carried from the previous iteration, `best = max(best, t)`) holds an
  equal value, and so do the interpreter's path facts (enclosing `try` scopes that already
  caught something, a path that may have returned) — see `Interpreter.sweep_state`,
- and no iteration so far wrote an attribute of an object made before it (state the carried
  names do not show).

A repeat is not run: the contexts the run iteration left on findings and on the functions it
entered are added again with the repeat's bindings, which is what running it would have done.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.entry.context import Context
from wgmma_lsp.interpret.ast_walk import push_children

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


@dataclass
class IterationRun:
    """One iteration that was run: what a repeat of it must match and what it left behind."""

    ctx: Context
    values: dict[str, Any]  # name -> raw value (or a unique marker when not a constant)
    state: tuple
    observed: set[str] = field(default_factory=set)
    findings: list[tuple[Any, list[Context]]] = field(default_factory=list)  # (Finding, new contexts)
    entered: list[tuple[int, set]] = field(default_factory=list)  # (function node id, new contexts)
    outgoing: dict[str, Any] = field(default_factory=dict)  # the body's names when it ended
    broke: bool = False  # it may have left the loop (`break`)

    def may_repeat(self, values: dict[str, Any]) -> bool:
        """Could a combination with these loop values repeat this run (state aside)?"""
        for name in self.observed:
            if name in values:
                a, b = self.values.get(name, _MISSING), values[name]
                if a is _MISSING or type(a) is not type(b) or a != b:
                    return False
        return True

    def repeated_by(self, values: dict[str, Any], state: tuple) -> bool:
        if state != self.state:
            return False
        for name in self.observed:
            a, b = self.values.get(name, _MISSING), values.get(name, _MISSING)
            if a is _MISSING or b is _MISSING or type(a) is not type(b) or a != b:
                return False
        return True


class _Missing:
    pass


_MISSING = _Missing()


def rebind(c: Any, old: tuple, new: tuple) -> Any:
    """A context the run iteration made (bindings starting with `old`), for the repeat. (Made
    field by field: what `dataclasses.replace` makes, without its walk of the fields — a repeat
    rebinds every context its run recorded.)"""
    if isinstance(c, Context) and c.bindings[:len(old)] == old:
        return type(c)(c.origin, c.line, new + c.bindings[len(old):], c.span, c.open)
    return c


_KINDS: tuple | None = None  # the value classes mentions_swept tells apart (imported once)


def _load_kinds() -> None:
    global _KINDS
    from wgmma_lsp.interpret.observe import Swept
    from wgmma_lsp.interpret.values import (
        ArrayVal, ClassVal, Const, DictVal, DTypeVal, FuncVal, InstanceVal, ModuleVal, Opaque,
        PartialVal, RefVal, SymInt, TupleVal, Unknown, UserModuleVal, Value, Wrapped,
    )

    leaf = (Const, ArrayVal, RefVal, DTypeVal, Unknown, Opaque, SymInt, FuncVal, ClassVal,
            ModuleVal, UserModuleVal)
    _KINDS = (Swept, leaf, TupleVal, DictVal, InstanceVal, PartialVal, Wrapped, Value)


def mentions_swept(v: Any, loop: int, depth: int = 0) -> bool:
    """Does a value hold a constant bound by the loop `loop` (id of its node)? Such a value
    belongs to one combination: another combination would hold its own. Arrays, refs and the
    like hold sizes, not constants; closures are not entered (they read the loop's live scope);
    a value of any other kind is looked into field by field."""
    if _KINDS is None:
        _load_kinds()
    Swept, Leaf, TupleVal, DictVal, InstanceVal, PartialVal, Wrapped, Value = _KINDS  # type: ignore[misc]
    if depth > 8:
        return True  # too deep to tell: treat it as the combination's own
    if isinstance(v, Swept):
        return any(tag[0] == loop for tag in v.tags)
    if isinstance(v, Leaf) or v is None:
        return False
    if isinstance(v, TupleVal):
        return any(mentions_swept(x, loop, depth + 1) for x in v.items)
    if isinstance(v, DictVal):
        return any(mentions_swept(x, loop, depth + 1) for _, x in v.items)
    if isinstance(v, InstanceVal):
        return any(mentions_swept(x, loop, depth + 1) for x in v.attrs.values())
    if isinstance(v, PartialVal):
        return mentions_swept(v.func, loop, depth + 1) or any(
            mentions_swept(x, loop, depth + 1) for x in (*v.args, *v.kwargs.values()))
    if isinstance(v, Wrapped):
        return mentions_swept(v.func, loop, depth + 1) or any(
            mentions_swept(x, loop, depth + 1) for x in v.kwargs.values())
    if isinstance(v, Value):
        fields = getattr(v, "__dict__", None) or {}
        return any(mentions_swept(x, loop, depth + 1) for x in fields.values()
                   if isinstance(x, (Value, tuple, list)))
    if isinstance(v, (tuple, list)):
        return any(mentions_swept(x, loop, depth + 1) for x in v)
    return False


# -- which names carry a value from one iteration into the next -------------------------------

def carried_names(body: list[ast.stmt], scope: ast.AST | None = None) -> frozenset[str]:
    """Names the body may read before it assigns them and also assigns somewhere: their value
    at the start of an iteration comes from the previous one. (Conservative: a name read in a
    nested function or comprehension counts as read where that is defined, and so does a name
    any function nested in the enclosing `scope` reads: the body may call it.)"""
    if not body:
        return frozenset()
    # Kept on the body's first statement, for this very list of statements: by their ids (the
    # list itself would make a cycle, statement -> cache -> list -> statement, that keeps the
    # syntax tree of every loop body alive until a full garbage collection).
    key = tuple(map(id, body))
    cached = getattr(body[0], "_wgmma_carried", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    exposed, _ = _exposed(body, set())
    assigned = assigned_names(body)
    if scope is not None:
        exposed |= _closure_loads(scope)
    out = frozenset(exposed & assigned)
    setattr(body[0], "_wgmma_carried", (key, out))
    return out


def _closure_loads(scope: ast.AST) -> frozenset[str]:
    """The free names read by the functions and lambdas nested in `scope` (names neither
    their parameters nor assigned in them)."""
    cached = scope.__dict__.get("_wgmma_closure_loads")
    if cached is not None:
        return cached
    out: set[str] = set()
    todo: list[ast.AST] = []
    push_children(todo, scope)  # (ast.iter_child_nodes, without its generators)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}
            local = {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
            out |= _loads(n) - params - local
        else:
            push_children(todo, n)
    result = frozenset(out)
    scope.__dict__["_wgmma_closure_loads"] = result
    return result


def assigned_names(body: list[ast.stmt]) -> set[str]:
    """Every name the body binds (nested functions' own locals aside from their names)."""
    return {n for stmt in body for n in _stores(stmt)}


def _names(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """(names the node reads, names it binds in this scope), in one pass, kept on the node.
    A nested def or class binds its name only; every name read inside it counts."""
    cached = node.__dict__.get("_wgmma_names")
    if cached is not None:
        return cached
    loads: set[str] = set()
    stores: set[str] = set()
    if isinstance(node, ast.Name):
        (loads if isinstance(node.ctx, ast.Load) else stores).add(node.id)
    else:
        children: list[ast.AST] = []
        push_children(children, node)  # (ast.iter_child_nodes, without its generators)
        for child in children:
            child_loads, child_stores = _names(child)
            loads |= child_loads
            stores |= child_stores
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores = {node.name}
        elif isinstance(node, ast.Lambda):
            stores = set()
        elif isinstance(node, ast.ExceptHandler) and node.name:
            stores.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores.update((a.asname or a.name).split(".")[0] for a in node.names)
    out = (frozenset(loads), frozenset(stores))
    node.__dict__["_wgmma_names"] = out
    return out


def _loads(node: ast.AST) -> frozenset[str]:
    return _names(node)[0]


def _stores(node: ast.AST) -> frozenset[str]:
    return _names(node)[1]


def _exits(body: list[ast.stmt]) -> bool:
    """Does this block always leave (its last statement raises, returns, breaks, continues)?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Raise, ast.Return, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return _exits(last.body) and _exits(last.orelse)
    return False


def _exposed(stmts: list[ast.stmt], defined: set[str]) -> tuple[set[str], set[str]]:
    """(names read before being assigned on some path, names assigned on every path)."""
    exposed: set[str] = set()
    defined = set(defined)
    for s in stmts:
        if isinstance(s, ast.If):
            exposed |= _loads(s.test) - defined
            e1, d1 = _exposed(s.body, defined)
            e2, d2 = _exposed(s.orelse, defined)
            exposed |= e1 | e2
            live = [d for d, b in ((d1, s.body), (d2, s.orelse)) if not _exits(b)]
            defined = set.intersection(*live) if live else d1 & d2
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            head = s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test
            exposed |= _loads(head) - defined
            inner = defined | (_stores(s.target) if isinstance(s, (ast.For, ast.AsyncFor)) else set())
            e, _ = _exposed(s.body, inner)
            exposed |= e
            e, _ = _exposed(s.orelse, defined)
            exposed |= e
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                exposed |= _loads(item.context_expr) - defined
                if item.optional_vars is not None:
                    defined |= _stores(item.optional_vars)
            e, defined = _exposed(s.body, defined)
            exposed |= e
        elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            e, d_body = _exposed(s.body, defined)
            exposed |= e
            e, after = _exposed(s.orelse, d_body)  # `else` runs after the whole body
            exposed |= e
            for h in s.handlers:
                if h.type is not None:
                    exposed |= _loads(h.type) - defined
                e, d_h = _exposed(h.body, defined | ({h.name} if h.name else set()))
                exposed |= e
                if not _exits(h.body):  # a handler that completes joins the paths after
                    after &= d_h
            e, d_fin = _exposed(s.finalbody, defined)
            exposed |= e
            defined = after | d_fin
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            exposed |= _loads(s) - defined
            defined.add(s.name)
        elif isinstance(s, ast.AugAssign):
            exposed |= (_loads(s.value) | _loads(s.target) | _stores(s.target)) - defined
            defined |= _stores(s.target)
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return, ast.Raise, ast.Assert,
                            ast.Delete, ast.Pass, ast.Import, ast.ImportFrom, ast.Global,
                            ast.Nonlocal, ast.Break, ast.Continue)):
            exposed |= _loads(s) - defined
            defined |= _stores(s)
        else:  # match and anything newer: every name it reads, nothing assigned for sure
            exposed |= _loads(s) - defined
    return exposed, defined

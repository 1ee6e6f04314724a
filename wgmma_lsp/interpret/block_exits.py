"""What a block of statements does, read from its syntax: the names it rebinds, whether it
leaves (`raise`/`return`) or breaks out of a loop."""

from __future__ import annotations

import ast

from wgmma_lsp.interpret.ast_walk import push_children

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Iterator


def _walk(node: ast.AST, handlers: bool) -> Iterator[ast.AST]:
    """`ast.walk`, or (`handlers=False`) a walk that enters neither `except` handlers nor
    nested functions and classes (their exits leave only themselves)."""
    if handlers:
        yield from ast.walk(node)
        return
    skip = (ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    todo = [node]
    kids: list[ast.AST] = []
    while todo:
        n = todo.pop()
        yield n
        push_children(kids, n)  # (ast.iter_child_nodes, without its generators)
        todo.extend(c for c in kids if not isinstance(c, skip))
        kids.clear()


def rebound_names(tree: ast.AST) -> set[str]:
    """The names `global` and `nonlocal` statements anywhere in the tree name. Those are
    statements: only blocks of statements are walked (an expression holds none), a small part
    of an `ast.walk` over every node (a kernel file's tree is mostly expressions)."""
    out: set[str] = set()
    todo = [tree]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
            continue
        for name in _BLOCK_FIELDS:  # body, orelse, finalbody; except handlers and match cases
            block = getattr(n, name, None)
            if type(block) is list:
                todo.extend(block)
    return out


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Continue, ast.Break, ast.Return))


def _breaks(body: list[ast.stmt], handlers: bool = True) -> bool:
    """Does a loop body leave early (break, continue, return, raise) somewhere? (With
    `handlers=False`, exits inside `except` handlers do not count.) A fact of the syntax:
    kept on each statement node, so loops run once per context walk their bodies once."""
    attr = "_wgmma_breaks" if handlers else "_wgmma_breaks_nh"
    for stmt in body:
        known = getattr(stmt, attr, None)
        if known is None:
            known = _stmt_breaks(stmt, handlers)
            setattr(stmt, attr, known)
        if known:
            return True
    return False


def _exits_own_loop(body: list[ast.stmt], kinds: tuple[type, ...], attr: str) -> bool:
    """Does a loop body hold a statement of `kinds` (break, continue) of its own loop, not of a
    loop, function or class nested in it? Kept on the first statement's node under `attr`."""
    if not body:
        return False
    known = getattr(body[0], attr, None)
    if known is not None:
        return known
    found = False
    todo: list[ast.AST] = list(body)
    while todo and not found:
        n = todo.pop()
        if isinstance(n, kinds):
            found = True
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(n.orelse)  # (its body's break/continue are its own)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.expr)):
            push_children(todo, n)
    setattr(body[0], attr, found)
    return found


def leaves_loop(body: list[ast.stmt]) -> bool:
    """Does a loop body `break` or `continue` its own loop somewhere? A body that only returns
    or raises can be run iteration by iteration as Python runs it: a `return` taken ends the
    function, one that may be taken makes what follows uncertain, as anywhere else."""
    return _exits_own_loop(body, (ast.Break, ast.Continue), "_wgmma_leaves_loop")


def has_break(body: list[ast.stmt]) -> bool:
    """A `break` of this loop in its body (its `else:` then may not run)."""
    return _exits_own_loop(body, (ast.Break,), "_wgmma_has_break")


def has_continue(body: list[ast.stmt]) -> bool:
    """A `continue` of this loop in its body."""
    return _exits_own_loop(body, (ast.Continue,), "_wgmma_has_continue")


def _stmt_breaks(stmt: ast.stmt, handlers: bool) -> bool:
    for node in _walk(stmt, handlers):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
            return True
        if isinstance(node, ast.Expr) and raises_to_skip(node.value):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            break
    return False


#: `pytest.skip(...)`, `pytest.xfail(...)`, `pytest.fail(...)`, `pytest.exit(...)` always raise
#: (as do `self.skipTest(...)` of unittest and absltest, and `self.fail(...)`).
_PYTEST_EXITS = {"skip", "xfail", "fail", "exit"}


def raises_to_skip(expr: ast.expr) -> bool:
    """Is this expression a call that raises to skip or fail the test it is in? Like `raise`,
    it ends its path: nothing after it there runs (a finding after it is not reported)."""
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Attribute):
        return False
    f = expr.func
    if f.attr == "skipTest" or (f.attr == "fail" and isinstance(f.value, ast.Name)
                                and f.value.id in ("self", "test_case", "pytest")):
        return True
    return f.attr in _PYTEST_EXITS and isinstance(f.value, ast.Name) and f.value.id == "pytest"


def _expects_error(expr: ast.expr) -> bool:
    """`pytest.raises(E)`, `self.assertRaises(E)`, `self.assertRaisesRegex(E, ...)`."""
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name == "raises" or name.startswith("assertRaises")

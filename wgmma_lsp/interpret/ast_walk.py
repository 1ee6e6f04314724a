"""What the interpreter's hand-written syntax-tree walks share (`generators.is_generator_function`,
`driver.function_names`, `target_gpu._attribute_names`): each keeps its own stack and asks what
each type of node is once per type, instead of `ast.walk`'s generators, which cost more than
the walk itself on the interpreter's hot paths."""

from __future__ import annotations

import ast

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

#: Nodes that hold no other node: never walked into.
CHILDLESS = (ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
             ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias)


def push_children(stack: list[Any], n: ast.AST) -> None:
    """Push the nodes directly below `n` (what `ast.iter_child_nodes(n)` gives) onto `stack`."""
    for field in n._fields:
        v = getattr(n, field, None)
        if isinstance(v, list):
            stack.extend(x for x in v if isinstance(x, ast.AST))
        elif isinstance(v, ast.AST):
            stack.append(v)


#: The nodes that open a scope of their own.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those inside the functions, classes and lambdas
    nested in it (their `def`/`class`/`lambda` node itself is given)."""
    todo: list[Any] = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, SCOPES):
            push_children(todo, node)

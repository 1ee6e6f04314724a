"""Broadcasting of `a + b`, `a - b`, `a * b`, `a / b` and comparisons of JAX arrays inside a
kernel body.

Mirrors (jax 0.10.2 and 0.12) `jnp`'s `promote_shapes` and lax's binary shape rule: operands of
different ranks, neither a scalar, are aligned by `lax.broadcast_shapes` (WG089, its
ValueError); operands of one rank go to the primitive, whose `_try_broadcast_shapes` compares
them dimension by dimension (WG088, its TypeError naming the primitive). A dimension pair is
compatible when equal or when one of the two is 1. Only inside a kernel body, where an array is a
JAX array for sure (a NumPy array's operator raises NumPy's error), and only with every
dimension a known number.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.values import ArrayVal, Value
from wgmma_lsp.rules import broadcast_ranks, broadcast_shapes

#: The lax primitive each operator binds (`/`: `true_divide`, `div` after the cast to float).
PRIMITIVES: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
                               ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
                               ast.Eq: "eq", ast.NotEq: "ne"}
#: ... and for two booleans (`jnp.add` of bools is `lax.bitwise_or`, `jnp.multiply` `bitwise_and`).
BOOL_PRIMITIVES: dict[type, str] = {ast.Add: "or", ast.Mult: "and"}


def _shape(v: Value) -> tuple[int, ...] | None:
    if not isinstance(v, ArrayVal) or v.shape is None or not all(type(d) is int for d in v.shape):
        return None
    return tuple(v.shape)  # type: ignore[arg-type]


def _fits(a: int, b: int) -> bool:
    return a == b or a == 1 or b == 1


def raises(interp, op: ast.operator | ast.cmpop, left: Value, right: Value, node: ast.AST) -> bool:
    """Whether JAX raises for `left <op> right` (reported here, at `node`; not when JAX raised
    before it got here: interpret/followon.py)."""
    if not interp.kernel.inside or type(op) not in PRIMITIVES:
        return False
    a, b = _shape(left), _shape(right)
    if a is None or b is None or not a or not b:  # (a scalar broadcasts against anything)
        return False
    if all(_fits(x, y) for x, y in zip(reversed(a), reversed(b))):  # (right-aligned, as NumPy)
        return False
    if len(a) != len(b):
        rule, message = broadcast_ranks.RULE, f"Incompatible shapes for broadcasting: shapes={[a, b]}"
    else:
        name = PRIMITIVES[type(op)]
        if type(op) in BOOL_PRIMITIVES:
            da, db = T.concrete(left.dtype), T.concrete(right.dtype)  # type: ignore[union-attr]
            if da is None or db is None:
                return False  # two booleans bind another primitive: not decided
            if T.is_bool(da) and T.is_bool(db):
                name = BOOL_PRIMITIVES[type(op)]
        rule, message = broadcast_shapes.RULE, f"{name} got incompatible shapes for broadcasting: {a}, {b}."
    interp.report(rule, message, interp.span(node), getattr(node, "lineno", 1) - 1)
    return True

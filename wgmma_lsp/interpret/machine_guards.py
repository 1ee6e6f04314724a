"""Guards on the machine a program runs on.

Collective kernels check the machine before they build anything:

    if (num_devices := jax.device_count()) != jax.process_count() and ...:
      raise ValueError("Kernel requires either 1 process per single GPU or ...")
    if (axis_size := lax.axis_size(axis_name)) != num_devices:
      raise ValueError("The kernel can only work over all devices in a Mesh.")

The device counts are not known without running (`models/collectives.py`: one symbol each), so
such a test cannot be decided. Treated as an ordinary unknown branch, every later finding would
only be "possible" although it holds on every machine where the code runs at all (on the others
the guard's own error comes first). So an `if` whose body only raises and whose test compares
only machine facts (`jax.device_count()`, `jax.local_device_count()`, `jax.process_count()`,
sizes built from them) with known numbers (other comparisons in it decided) is taken to pass: the code after it is analysed for
the machines it runs on. A passing `a != b` guard also says `a == b`: a name holding a machine
fact on one side takes the known number on the other (`num_devices` is the mesh's axis size).
Tests over anything else (an unknown argument, a traced value) keep their usual meaning.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret.values import Const, SymInt, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol
    from contextlib import AbstractContextManager

    from wgmma_lsp.interpret.env import Env

    class Interpreter(Protocol):
        """What a machine guard needs of the interpreter (`interp.Interpreter`): evaluating
        without recording."""

        def eval(self, node: ast.expr | None, env: "Env") -> Value: ...
        def quiet(self) -> "AbstractContextManager[None]": ...


#: The symbols (`models/collectives.py`) that stand for facts of the machine.
MACHINE_FACTS = frozenset({"jax.device_count()", "jax.local_device_count()", "jax.process_count()"})

_ORDER = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _machine(v: Value) -> bool:
    return isinstance(v, SymInt) and bool(v.dim.terms) and all(n in MACHINE_FACTS for n, _ in v.dim.terms)


def _number(v: Value) -> bool:
    return (isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool)) \
        or isinstance(v, SymInt)


def _comparisons(test: ast.expr) -> list[ast.Compare] | None:
    """The comparisons an `and`/`or` of comparisons is made of (None for any other test)."""
    if isinstance(test, ast.BoolOp):
        out: list[ast.Compare] = []
        for v in test.values:
            sub = _comparisons(v)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _ORDER):
        return [test]
    return None


def _bound_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def assume_machine_guard(interp: "Interpreter", s: ast.If, env: "Env") -> bool:
    """True when `s` (whose test the caller found undecided) is a guard on machine facts,
    taken to pass; a passing `name != number` narrows `name` in `env`."""
    if s.orelse or len(s.body) != 1 or not isinstance(s.body[0], ast.Raise):
        return False
    compares = _comparisons(s.test)
    if not compares:
        return False
    operands: list[tuple[ast.Compare, Value, Value]] = []
    with interp.quiet():  # already evaluated once (and recorded) by the `if` itself
        for c in compares:
            left, right = interp.eval(c.left, env), interp.eval(c.comparators[0], env)
            if not (_number(left) and _number(right)):
                return False
            if not (_machine(left) or _machine(right)) and not (isinstance(left, Const) and isinstance(right, Const)):
                return False  # undecided for another reason than the machine
            operands.append((c, left, right))
    if len(operands) == 1 and isinstance(operands[0][0].ops[0], ast.NotEq):
        c, left, right = operands[0]
        for node, mine, other in ((c.left, left, right), (c.comparators[0], right, left)):
            name = _bound_name(node)
            if name is not None and _machine(mine) and isinstance(other, Const) and name in env.vars:
                env.vars[name] = other
    return True

"""The index of a loop whose body the race analysis unrolls: a traced scalar that also knows its
value at each step.

JAX traces a `lax.fori_loop` / `pl.loop` body once, with the index a traced `int32[]`; the
interpreter does the same (an `ArrayVal`). For a loop with Python-int bounds, the race analysis
(wgmma_lsp/hazards) wants the slot of a multi-buffered loop (`slot = i % num_stages`) at every
step. `StepInt` is that traced scalar — every model sees an `int32[]` as before — carrying, for
the one loop being unrolled (`loop`), its value at each step (`at[t]`). Integer arithmetic with
Python ints or with the same loop's `StepInt` (`+ - * // %`, `lax.rem`, comparisons) keeps the
values; anything else forgets them (the result is an ordinary `ArrayVal`).

A loop model takes its index from `take_index` (what the race analysis `offer`ed for this loop,
or a plain `int32[]`).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass

from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import ArrayVal, Const, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

INT32_NAME = "int32"


@dataclass(frozen=True)
class StepInt(ArrayVal):
    """A traced integer (or bool) scalar of an unrolled loop's body, and its value at each step."""

    loop: int = 0
    at: tuple[int, ...] = ()


def _int(v: Value) -> int | None:
    if isinstance(v, Const) and type(v.value) is int:
        return v.value
    return None


def _values(v: Value, loop: int, n: int) -> tuple[int, ...] | None:
    if isinstance(v, StepInt):
        return v.at if v.loop == loop and len(v.at) == n else None
    k = _int(v)
    return (k,) * n if k is not None else None


def _trunc_rem(a: int, b: int) -> int:
    """`lax.rem`: C's remainder (the sign of the dividend)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
          ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_CMP = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def _combine(fn, left: Value, right: Value, result: Value) -> Value:
    step = left if isinstance(left, StepInt) else right
    assert isinstance(step, StepInt)
    if not isinstance(result, ArrayVal) or result.shape != ():
        return result
    a, b = _values(left, step.loop, len(step.at)), _values(right, step.loop, len(step.at))
    if a is None or b is None:
        return result
    try:
        at = tuple(int(fn(x, y)) for x, y in zip(a, b))
    except ZeroDivisionError:
        return result
    return StepInt(result.shape, result.dtype, result.layout, loop=step.loop, at=at)


def binop(op: ast.operator, left: Value, right: Value, result: Value) -> Value:
    """`result` (what the models computed for `left op right`), with the step values kept when
    one side is a `StepInt` and the other a Python int or the same loop's `StepInt`."""
    if not (isinstance(left, StepInt) or isinstance(right, StepInt)):  # (every binop: this first)
        return result
    fn = _ARITH.get(type(op))
    return result if fn is None else _combine(fn, left, right, result)


def compare(op: ast.cmpop, left: Value, right: Value, result: Value) -> Value:
    if not (isinstance(left, StepInt) or isinstance(right, StepInt)):
        return result
    fn = _CMP.get(type(op))
    return result if fn is None else _combine(fn, left, right, result)


def rem(left: Value, right: Value, result: Value) -> Value:
    """`lax.rem(x, y)` (the sign of x, as C)."""
    if not (isinstance(left, StepInt) or isinstance(right, StepInt)):
        return result
    return _combine(_trunc_rem, left, right, result)


def remainder(left: Value, right: Value, result: Value) -> Value:
    """`jnp.remainder` / `jnp.mod` (the sign of y, as Python's `%`)."""
    if not (isinstance(left, StepInt) or isinstance(right, StepInt)):
        return result
    return _combine(lambda a, b: a % b, left, right, result)


def mask(cond: Value, loop: int, n: int) -> tuple[bool, ...] | None:
    """Whether a traced condition holds at each step of the unrolled loop (None: not known)."""
    if isinstance(cond, StepInt) and cond.loop == loop and len(cond.at) == n:
        return tuple(bool(x) for x in cond.at)
    return None


def mentions(v: Any, loop: int, depth: int = 0) -> bool:
    """Does the value (a ref view, an index) hold a `StepInt` of this loop?"""
    if isinstance(v, StepInt):
        return v.loop == loop
    if depth > 12:
        return False
    if isinstance(v, tuple):
        return any(mentions(x, loop, depth + 1) for x in v)
    if _kind(v) is _DATACLASS:
        return any(mentions(getattr(v, name), loop, depth + 1) for name in _compared(v))
    return False


_COMPARED: dict[type, tuple[str, ...]] = {}  # a value class -> its fields that take part in ==
_PLAIN_TUPLE, _DATACLASS, _OTHER = "tuple", "dataclass", "other"
_KINDS: dict[type, str] = {}  # a type -> which of the three it is (the tests below, per type)


def _kind(v: Any) -> str:
    """A plain tuple (not a dataclass), a dataclass `Value`, or other: what `at_step` and
    `mentions` walk into, decided once per type (both tests depend on the type alone)."""
    t = type(v)
    kind = _KINDS.get(t)
    if kind is None:
        if isinstance(v, tuple) and not dataclasses.is_dataclass(v):
            kind = _PLAIN_TUPLE
        elif isinstance(v, Value) and dataclasses.is_dataclass(v):
            kind = _DATACLASS
        else:
            kind = _OTHER
        _KINDS[t] = kind
    return kind


def _compared(v: Any) -> tuple[str, ...]:
    names = _COMPARED.get(type(v))
    if names is None:
        names = _COMPARED[type(v)] = tuple(f.name for f in dataclasses.fields(v) if f.compare)
    return names


def at_step(v: Any, loop: int, t: int, depth: int = 0, memo: dict | None = None,
            fixed: set | None = None) -> Any:
    """The value with this loop's `StepInt`s replaced by their value at step t (Python ints).
    `memo` (one per step, while the values it is given stay alive): the answers so far, by the
    value's id and depth — the operations of a loop body share their refs and indices.
    `fixed` (one for all the steps, the same lifetime): the (id, depth) of values found to hold
    none of this loop's `StepInt`s within the depth walked — the same at every step, since only
    the number substituted depends on the step — so that each step walks only what moves (a
    ref's shape, dtype and transforms were walked again at every step of every operation)."""
    if isinstance(v, StepInt):
        return Const(v.at[t]) if v.loop == loop else v
    if depth > 12:
        return v
    if memo is not None:
        key = (id(v), depth)
        if fixed is not None and key in fixed:
            return v
        known = memo.get(key)
        if known is None:
            known = memo[key] = _at_step(v, loop, t, depth, memo, fixed)
            if known is v and fixed is not None:
                fixed.add(key)
        return known
    return _at_step(v, loop, t, depth, memo, fixed)


def _at_step(v: Any, loop: int, t: int, depth: int, memo: dict | None, fixed: set | None) -> Any:
    kind = _kind(v)
    if kind is _PLAIN_TUPLE:
        items = tuple(at_step(x, loop, t, depth + 1, memo, fixed) for x in v)
        return items if any(a is not b for a, b in zip(items, v)) else v
    if kind is _DATACLASS:
        changes = {}
        for name in _compared(v):
            x = getattr(v, name)
            y = at_step(x, loop, t, depth + 1, memo, fixed)
            if y is not x:
                changes[name] = y
        return dataclasses.replace(v, **changes) if changes else v
    return v


def offer(interp, index: StepInt | None) -> None:
    """The index the next loop model's body gets (None: withdraw the offer)."""
    interp._loop_steps_index = index


def take_index(interp) -> ArrayVal:
    """The loop index for the body a loop model is about to trace: what was offered for this
    loop, or a traced `int32[]`."""
    offered = getattr(interp, "_loop_steps_index", None)
    interp._loop_steps_index = None
    return offered if isinstance(offered, StepInt) else ArrayVal((), DType(INT32_NAME))


__all__ = ["StepInt", "at_step", "binop", "compare", "mask", "mentions", "offer", "rem",
           "remainder", "take_index"]

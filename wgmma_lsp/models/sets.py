"""Python's `set` and `frozenset`, as far as their order does not matter.

A library collects candidate configs in a set (tokamax's heuristics: `configs = set()`,
`configs.add(Config(...))`, `if configs:`, `len(configs) == 1`, `next(iter(configs))`,
`max(configs, key=_score)`). A set is its distinct elements (interpret/set_elements.py decides
equality and hashability, or leaves the contents unknown); the order CPython iterates them in
follows their hashes, which the interpreter does not compute, so:

- known: `set()`, `set(xs)`, `frozenset(xs)`, `{a, b}`, `{x for ...}`, `s.add(x)`,
  `s.update(xs, ...)`, `s.discard(x)`, `s.copy()`, `s.union(xs, ...)`, `len(s)`, `bool(s)`,
  `x in s`, the operators `|`, `&`, `-`, `^` and comparisons of two sets
  (interpret/set_elements.py); iterating a set of at most one element (`next(iter(s))`);
  `sorted(s)` of distinct keys; `max`/`min(s, key=f)` with one strict extreme (models/python.py);
- not followed (unknown): iterating two or more elements in order (`for x in s`, `list(s)`),
  `pop()`, every other method.

A set changes in place like a list (interpret/mutation.py): a change not followed exactly (an
uncertain path, an object made before the code running) spoils it, and every later read of it
is unknown.
"""

from __future__ import annotations

from collections.abc import Callable

from wgmma_lsp.interpret import mutation, set_elements
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, SetVal, Value
from wgmma_lsp.models.registry import method, model


def _from_iterables(call: Call, start: tuple[Value, ...], iterables: list[Value]) -> tuple[Value, ...] | None:
    out: tuple[Value, ...] | None = start
    for a in iterables:
        given = set_elements.elements(call.interp, a)
        if given is None or out is None:
            return None
        out = set_elements.added(call.interp, out, given)
    return out


def _made(call: Call, frozen: bool) -> Value:
    if call.kwargs or len(call.args) > 1 or not call.complete:
        return call.interp.unknown_call(call)
    return set_elements.new_set(call.interp, set_elements.elements(call.interp, call.args[0]) if call.args else [],
                                frozen)


@model("builtins.set")
def _set(call: Call) -> Value:
    """`set()` / `set(iterable)`: a new set."""
    return _made(call, frozen=False)


@model("builtins.frozenset")
def _frozenset(call: Call) -> Value:
    """`frozenset()` / `frozenset(iterable)`."""
    return _made(call, frozen=True)


def _changed(obj: Value, call: Call, items: Callable[[SetVal], tuple[Value, ...] | None]) -> Value:
    """A method changing a set in place to `items(s)` (None: not known, so the set is spoiled)."""
    if not isinstance(obj, SetVal) or obj.frozen:
        return UNKNOWN
    mutation.write(call.interp, obj, items(obj) if call.complete and not call.kwargs else None)
    return Const(None)


@method("SetVal.add")
def _add(obj: Value, call: Call) -> Value:
    return _changed(obj, call, lambda s: set_elements.added(call.interp, s.items, call.args)
                    if len(call.args) == 1 else None)


@method("SetVal.update")
def _update(obj: Value, call: Call) -> Value:
    return _changed(obj, call, lambda s: _from_iterables(call, s.items, list(call.args)))


@method("SetVal.discard")
def _discard(obj: Value, call: Call) -> Value:
    return _changed(obj, call, lambda s: _without(call.interp, s, call.args[0]) if len(call.args) == 1 else None)


def _without(interp: object, s: SetVal, x: Value) -> tuple[Value, ...] | None:
    """`s`'s elements but one equal to `x` (None: equality or hashability not decided)."""
    if not set_elements.hashable(x):
        return None
    answers = [set_elements.contains(interp, SetVal((y,)), x) for y in s.items]
    return None if None in answers else tuple(y for y, same in zip(s.items, answers) if not same)


@method("SetVal.copy")
def _copy(obj: Value, call: Call) -> Value:
    if not isinstance(obj, SetVal) or call.args or call.kwargs:
        return UNKNOWN
    return SetVal(obj.items, obj.frozen)


@method("SetVal.union")
def _union(obj: Value, call: Call) -> Value:
    if not isinstance(obj, SetVal) or call.kwargs or not call.complete:
        return UNKNOWN
    items = _from_iterables(call, obj.items, list(call.args))
    return SetVal(items, obj.frozen) if items is not None else UNKNOWN

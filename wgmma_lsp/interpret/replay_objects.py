"""What a memoised call's result holds that a replay must not share with the run it stands for
(CPython is the spec: `tests/test_memo_identity.py`).

Each call makes its own objects, and returns the ones it was given as they are: `def make():
return []` gives every caller a new list, `def ident(xs): return xs` gives each caller back the
very list it passed. A memo key holds a call's lists, dicts, sets and objects of user classes by
their contents (`memo.fingerprint`), so a replay stands for a call given *equal* objects, not the
same ones. A replay's result is therefore made, for the replaying call, of

- the objects the run made, made anew (each once: two items holding one list hold one new list),
  where they are reached through tuples, lists, dicts, sets, objects' attributes, partials, bound
  methods and functions' bound `self`;
- the objects the run was given (the lists, dicts, sets and objects its arguments hold, as the
  key walks them: `given`), only when the replaying call was given the very same ones, in the
  same places: a call given equal but other objects runs instead;
- anything else (a module's list, a class) as it was: the same object for every caller.

A run is not stored (`plan` says UNSAFE) when its result reaches an object it made somewhere a
replay cannot make anew (a closure's scope, a function's defaults, a class it defined, a model's
value, a generator's call), or more objects than a replay should copy.
"""

from __future__ import annotations

from wgmma_lsp.interpret.classes import NamedTupleVal
from wgmma_lsp.interpret.generators import GeneratorVal
from wgmma_lsp.interpret.values import (
    ApiVal, ArrayVal, ClassVal, Const, DictVal, DTypeVal, ForeignName, FuncVal, InstanceVal, ModuleVal,
    Opaque, PartialVal, SetVal, ShapeDtypeVal, SliceVal, SymInt, TransformVal, TupleVal, Unknown,
    UnknownInt, UserModuleVal, Value,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: `plan`'s answers: return the result as it is; make the objects the run made anew; the same,
#: and replay only for a call given the very objects the run was given; do not store the run.
AS_IS, FRESH, GIVEN, UNSAFE = 0, 1, 2, 3

MAX_OBJECTS = 2_000  # values a plan walks (a bigger result is not stored)
MAX_DEPTH = 40  # nesting a plan walks (`copy` recurses as deep)


def held(func: FuncVal, args: list[Value], kwargs: dict[str, Value]) -> list[Value]:
    """The lists, dicts, sets and objects of user classes a call is given (its function's bound
    `self`, its arguments), in the order the memo key walks them (`memo.fingerprint`: two calls
    with equal keys hold as many, in the same places)."""
    out: list[Value] = []
    if func.bound_self is not None:
        _held(func.bound_self, out, 0)
    for a in args:
        _held(a, out, 0)
    for k in sorted(kwargs):
        _held(kwargs[k], out, 0)
    return out


def _held(v: Value, out: list[Value], depth: int) -> None:
    if depth > 8:  # (deeper than a key goes: memo.MAX_DEPTH)
        return
    if isinstance(v, TupleVal):
        if v.is_list:
            out.append(v)
        for x in v.items:
            _held(x, out, depth + 1)
    elif isinstance(v, DictVal):
        out.append(v)
        for _, x in v.items:
            _held(x, out, depth + 1)
    elif isinstance(v, InstanceVal):
        out.append(v)
        for k in sorted(v.attrs):
            _held(v.attrs[k], out, depth + 1)
    elif isinstance(v, SetVal):  # (keyed as a value: its items by their hash, an object by identity)
        if not v.frozen:
            out.append(v)
    elif isinstance(v, PartialVal):
        _held(v.func, out, depth + 1)
        for x in v.args:
            _held(x, out, depth + 1)
        for k in sorted(v.kwargs):
            _held(v.kwargs[k], out, depth + 1)
    elif isinstance(v, FuncVal) and v.bound_self is not None:
        _held(v.bound_self, out, depth + 1)


def holds_shared(given: list[Value]) -> bool:
    """Whether a call given `given` (`held`) is given an object of another module's summary (an
    instance marked `shared`, a list or dict born 0: program.py), which an analysis changes
    outside the object."""
    return any(x.born == 0 or getattr(x, "shared", False) for x in given)


def same_given(given: tuple[Value, ...], now: list[Value]) -> bool:
    """Whether a call holds the very objects `given` (`held`) a run was given, in their places."""
    return len(given) == len(now) and all(a is b for a, b in zip(given, now))


class _Plan:
    __slots__ = ("born", "given", "given_ids", "reached_given", "made", "objects", "unsafe", "seen")

    def __init__(self, born: int, given: list[Value]) -> None:
        self.born = born
        self.given = given
        self.given_ids: set[int] | None = None  # (made on first need)
        self.reached_given = False
        self.made = False
        self.objects = 0
        self.unsafe = False
        self.seen: set[tuple[int, bool | None]] = set()


def holds_nothing(v: Value) -> bool:
    """Whether `v` is a value a replay gives as it is, whatever the run (a constant, an array...)."""
    return type(v) in _LEAVES


def plan(result: Value | None, born: int, given: list[Value]) -> int:
    """How a replay gives `result`, the result of a run that began at `born` (the objects born
    since are the run's) and was given `given` (`held`): AS_IS, FRESH, GIVEN or UNSAFE."""
    if result is None or type(result) in _LEAVES:
        return AS_IS
    p = _Plan(born, given)
    _walk(p, result, True, 0)
    if p.unsafe:
        return UNSAFE
    if p.reached_given:
        return GIVEN
    return FRESH if p.made else AS_IS


def _walk(p: _Plan, v: Any, copyable: bool, depth: int) -> None:
    """Walk `v`, reached through edges `copy` follows (`copyable`) or not: an object the run
    made where a replay cannot make it anew makes the plan unsafe."""
    t = type(v)
    if p.unsafe or t in _LEAVES:
        return
    seen = (id(v), copyable)  # (an object reached both ways is walked both ways)
    if seen in p.seen:
        return
    p.seen.add(seen)
    p.objects += 1
    if depth > MAX_DEPTH or p.objects > MAX_OBJECTS:
        p.unsafe = True
        return
    if isinstance(v, TupleVal) and not v.is_list or isinstance(v, SetVal) and v.frozen:
        # (immutable: made anew only where an item is)
        for x in v.items:
            _walk(p, x, copyable and t in _COPIED, depth + 1)
        return
    if isinstance(v, (TupleVal, DictVal, SetVal, InstanceVal, GeneratorVal)):
        if v.born < p.born or getattr(v, "shared", False):
            # An object older than the run (or another module's): the same for every caller,
            # unless the call was given it (then replayed only for a call given it too).
            if p.given_ids is None:
                p.given_ids = {id(x) for x in p.given}
            if id(v) in p.given_ids:
                p.reached_given = True
            return  # (what it holds is as old, or was put there by a write: then not stored)
        if not copyable or t not in _COPIED:
            p.unsafe = True  # made by the run, where a replay cannot make it anew
            return
        p.made = True
        if isinstance(v, DictVal):
            for _, x in v.items:
                _walk(p, x, True, depth + 1)
        elif isinstance(v, InstanceVal):
            _walk(p, v.cls, False, depth + 1)  # (of a class the run defined: unsafe)
            for x in v.attrs.values():
                _walk(p, x, True, depth + 1)
        else:
            for x in v.items:
                _walk(p, x, True, depth + 1)
        return
    if t is FuncVal:
        if v.bound_self is not None:
            _walk(p, v.bound_self, copyable, depth + 1)
        for x in v.defaults:
            _walk(p, x, False, depth + 1)
        for x in v.kw_defaults.values():
            _walk(p, x, False, depth + 1)
        env = v.closure
        while env is not None and env.parent is not None:  # (a module's scope: old)
            if (id(env), None) not in p.seen:
                p.seen.add((id(env), None))
                for x in env.vars.values():
                    _walk(p, x, False, depth + 1)
            env = env.parent
        return
    if t is PartialVal:
        _walk(p, v.func, copyable, depth + 1)
        for x in v.args:
            _walk(p, x, copyable, depth + 1)
        for x in v.kwargs.values():
            _walk(p, x, copyable, depth + 1)
        return
    if t is ClassVal:
        if v.born >= p.born and not v.shared:
            p.unsafe = True  # a class the run defined: each run of a class statement is a class
        return
    # Any other value: what it holds, not made anew by a replay.
    fields = getattr(v, "__dict__", None)
    if fields is None:
        fields = {s: getattr(v, s, None) for s in getattr(t, "__slots__", ())}
    for x in fields.values():
        if isinstance(x, Value):
            _walk(p, x, False, depth + 1)
        elif isinstance(x, (tuple, list)):
            for y in x:
                if isinstance(y, Value):
                    _walk(p, y, False, depth + 1)
        elif isinstance(x, dict):
            for y in x.values():
                if isinstance(y, Value):
                    _walk(p, y, False, depth + 1)


def copy(v: Value, born: int, made: dict[int, Value] | None = None, depth: int = 0) -> Value:
    """`v` with the objects made since `born` made anew, each once (a replay's result; `plan`
    said FRESH or GIVEN, so everything made is reached through copyable edges)."""
    if made is None:
        made = {}
    t = type(v)
    if t in _LEAVES:
        return v
    done = made.get(id(v))
    if done is not None:
        return done
    if depth > MAX_DEPTH:  # (the plan walked no deeper)
        return v
    if t is TupleVal or t in _NAMED_TUPLES:
        if v.is_list:
            if v.born < born:
                return v
            new = TupleVal((), True, spoiled=v.spoiled)
            made[id(v)] = new
            object.__setattr__(new, "items", tuple(copy(x, born, made, depth + 1) for x in v.items))
            return new
        items = tuple(copy(x, born, made, depth + 1) for x in v.items)
        if all(a is b for a, b in zip(items, v.items)):
            return v
        new = TupleVal(items, spoiled=v.spoiled) if t is TupleVal else t(items, spoiled=v.spoiled, cls=v.cls)
        made[id(v)] = new
        return new
    if t is DictVal:
        if v.born < born:
            return v
        new = DictVal((), spoiled=v.spoiled)
        made[id(v)] = new
        object.__setattr__(new, "items", tuple((k, copy(x, born, made, depth + 1)) for k, x in v.items))
        return new
    if t is SetVal:
        if v.frozen:
            items = tuple(copy(x, born, made, depth + 1) for x in v.items)
            return v if all(a is b for a, b in zip(items, v.items)) else SetVal(items, True, spoiled=v.spoiled)
        if v.born < born:
            return v
        new = SetVal((), spoiled=v.spoiled)
        made[id(v)] = new
        object.__setattr__(new, "items", tuple(copy(x, born, made, depth + 1) for x in v.items))
        return new
    if t is InstanceVal:
        if v.born < born or v.shared:
            return v
        new = InstanceVal(v.cls, {})
        made[id(v)] = new
        new.attrs.update((k, copy(x, born, made, depth + 1)) for k, x in v.attrs.items())
        return new
    if t is FuncVal:
        if v.bound_self is None:
            return v
        obj = copy(v.bound_self, born, made, depth + 1)
        if obj is v.bound_self:
            return v
        new = FuncVal(v.node, v.closure, v.name, v.defaults, v.kw_defaults, obj)
        made[id(v)] = new
        return new
    if t is PartialVal:
        func = copy(v.func, born, made, depth + 1)
        args = tuple(copy(x, born, made, depth + 1) for x in v.args)
        kwargs = {k: copy(x, born, made, depth + 1) for k, x in v.kwargs.items()}
        if func is v.func and all(a is b for a, b in zip(args, v.args)) \
                and all(kwargs[k] is x for k, x in v.kwargs.items()):
            return v
        new = PartialVal(func, args, kwargs, v.arg_spans)
        made[id(v)] = new
        return new
    return v


#: Values that hold no list, dict, set, object or function: the same for every caller. (A user
#: module, too: its names are module-level values, shared.)
_LEAVES = frozenset({Const, Unknown, UnknownInt, ForeignName, Opaque, SymInt, SliceVal, DTypeVal, ApiVal,
                     ModuleVal, UserModuleVal, ArrayVal, ShapeDtypeVal, TransformVal, type(None)})
_NAMED_TUPLES = frozenset({NamedTupleVal})
_COPIED = frozenset({TupleVal, DictVal, SetVal, InstanceVal, NamedTupleVal})

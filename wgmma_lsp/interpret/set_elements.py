"""What a set holds, as CPython decides it (Objects/setobject.c): each element once.

An element equal (Python `==`) to one already held is not added again — `{1, 1.0, True}` is `{1}` —
and an element that is not hashable raises TypeError. The interpreter decides both only where it
knows them: constants of the hashable built-in types, tuples of such, and instances of frozen
dataclasses without their own `__eq__`/`__hash__` (hashed and compared by their fields). So are
`numpy.dtype` objects (`x.dtype`, `jnp.dtype(...)`; not the scalar types `jnp.float16`, which are
`==` to them but hash apart), and enum members (an `IntEnum`'s equal their ints, a plain `Enum`'s
only themselves). Anything else — an array, a list, an instance it cannot compare, a float NaN (a
set keeps the same NaN object once but two NaN objects twice: identity the interpreter does not
track) — leaves the set's contents unknown, never a guess.

Where every element has an *equality key* (`element_key`: a Python value equal exactly where the
elements are `==`, as CPython's dict keys are — `1`, `1.0`, `True` one key), elements are
deduplicated by key, in linear time, up to MAX_KEYED_ELEMENTS (a library's autotuning configs:
a thousand frozen dataclass instances); otherwise each pair is compared, up to MAX_ELEMENTS.

The order a set is iterated in follows the elements' hashes; the interpreter does not compute
them, so `extreme` only answers where the order cannot matter: one element whose key is the
strict largest (smallest).
"""

from __future__ import annotations

import ast
import math
from collections import OrderedDict

from wgmma_lsp.interpret import classes, mutation, operators
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    Const,
    DictVal,
    DTypeVal,
    InstanceVal,
    SetVal,
    TupleVal,
    Value,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: The interpreter (interp.Interpreter), as a type: not imported, since it imports this module.
    Interpreter = Any

MAX_ELEMENTS = 256  # a set whose elements are compared pair by pair: not followed past this
MAX_KEYED_ELEMENTS = 4096  # a set whose elements all have equality keys
_HASHABLE = (bool, int, float, complex, str, bytes, type(None))


def hashable(v: Value) -> bool:
    """Whether `v` is known hashable, with a hash consistent with the `==` the interpreter decides."""
    if isinstance(v, Const):
        if type(v.value) is float and math.isnan(v.value):
            return False
        return type(v.value) in _HASHABLE
    if isinstance(v, TupleVal):
        return type(v) is TupleVal and not v.is_list and not v.spoiled and all(hashable(i) for i in v.items)
    if isinstance(v, SetVal):
        return v.frozen and not v.spoiled and all(hashable(i) for i in v.items)
    if isinstance(v, InstanceVal) and _enum_member(v):
        return True
    if isinstance(v, DTypeVal):  # a numpy.dtype object (a scalar type hashes otherwise)
        return v.instance and type(v.dtype) is DType
    if isinstance(v, InstanceVal):  # a frozen dataclass: hashed by its fields
        return _hashed_by_fields(v) \
            and all(n in v.attrs and hashable(v.attrs[n]) for n, _ in classes.dataclass_fields(v.cls))
    return False


def _hashed_by_fields(v: InstanceVal) -> bool:
    """Whether `v` is an object of a frozen dataclass hashed and compared by its fields (its
    fields themselves not looked at)."""
    cls = v.cls
    return cls.compares_fields and classes.frozen(cls) and not classes.opaque_bases(cls) and not v.shared \
        and all(classes.lookup(cls, m) is None for m in ("__eq__", "__hash__"))


def _enum_member(v: InstanceVal) -> bool:
    """A member of an enum class whose equality and hash are the enum module's own (a member of
    another module's summary too: what they depend on, its value, is set when its class is made)."""
    cls = v.cls
    return cls.kind in classes.ENUMS and "_value_" in v.attrs \
        and all(classes.lookup(cls, m) is None for m in ("__eq__", "__hash__"))


def element_key(v: Value) -> Any:
    """A Python value standing for the hashable element `v`: two keys are equal exactly where
    the interpreter decides the elements `==` (None: no key; compare pair by pair)."""
    if isinstance(v, Const):
        x = v.value
        if type(x) not in _HASHABLE or (type(x) is float and math.isnan(x)):
            return None
        return ("c", x)
    if isinstance(v, TupleVal):
        if type(v) is not TupleVal or v.is_list or v.spoiled:
            return None
        items = []
        for i in v.items:
            k = element_key(i)
            if k is None:
                return None
            items.append(k)
        return ("t", tuple(items))
    if isinstance(v, DTypeVal):  # equal to its name as a string too, but hashed apart from it
        return ("d", v.dtype.name) if hashable(v) else None
    if isinstance(v, InstanceVal) and _enum_member(v):
        if v.cls.kind == "intenum":  # equal to its int (`D.M == 0`)
            value = v.attrs.get("_value_")
            return ("c", value.value) if isinstance(value, Const) and type(value.value) is int else None
        return ("e", id(v))  # a plain Enum's member equals itself only
    if isinstance(v, InstanceVal) and _hashed_by_fields(v):  # a frozen dataclass: its class, its fields
        # (a field with a key is hashable: `hashable(v)`'s test of each field is the key's own)
        attrs = v.attrs
        fields = []
        for n, _ in classes.dataclass_fields(v.cls):
            f = element_key(attrs[n]) if n in attrs else None
            if f is None:
                return None
            fields.append(f)
        return ("i", id(v.cls), tuple(fields))
    return None


def _equal(interp: Interpreter, a: Value, b: Value) -> bool | None:
    out = operators.item_equal(interp, a, b)
    return out.value if isinstance(out, Const) and isinstance(out.value, bool) else None


def added(interp: Interpreter, items: tuple[Value, ...], new: list[Value] | tuple[Value, ...]
          ) -> tuple[Value, ...] | None:
    """`items` with each of `new` added, in turn, unless equal to one held (the first one kept,
    as CPython keeps it); None where an element's hash or equality is not decided."""
    keyed = _added_by_key(items, new)
    if keyed is not _NO_KEY:
        return keyed
    out = list(items)
    for x in new:
        if not hashable(x):
            return None
        answers = [_equal(interp, x, y) for y in out]
        if None in answers:
            return None
        if True not in answers:
            out.append(x)
            if len(out) > MAX_ELEMENTS:
                return None
    return tuple(out)


_NO_KEY = object()
#: The keys of recent sets' items (by the items tuple, kept alive beside them), so that adding to
#: a set one element at a time does not recompute every key held (a loop building 1,000 configs).
_KEYED: OrderedDict[int, tuple[tuple[Value, ...], dict[Any, Value]]] = OrderedDict()
_KEYED_SETS = 32


def _held_keys(items: tuple[Value, ...]) -> dict[Any, Value] | None:
    """Each of `items`' keys, in order (a fresh dict the caller may change), else None."""
    cached = _KEYED.pop(id(items), None)
    if cached is not None and cached[0] is items:
        return cached[1]  # (taken out: the caller files it under the items it makes)
    held: dict[Any, Value] = {}
    for x in items:
        k = element_key(x)
        if k is None:
            return None
        held.setdefault(k, x)
    return held


def _added_by_key(items: tuple[Value, ...], new: list[Value] | tuple[Value, ...]) -> Any:
    """`added` by equality keys: _NO_KEY where some element has none (compare instead); None
    where the set would grow past MAX_KEYED_ELEMENTS (not followed)."""
    new_keys = [element_key(x) for x in new]
    if None in new_keys:
        return _NO_KEY
    held = _held_keys(items)
    if held is None:
        return _NO_KEY
    grew = False
    for k, x in zip(new_keys, new):
        if k not in held:
            held[k] = x
            grew = True
            if len(held) > MAX_KEYED_ELEMENTS:
                return None
    out = tuple(held.values()) if grew else items
    _KEYED[id(out)] = (out, held)
    while len(_KEYED) > _KEYED_SETS:
        _KEYED.popitem(last=False)
    return out


def new_set(interp: Interpreter, items: list[Value] | tuple[Value, ...] | None, frozen: bool = False) -> Value:
    """A set (frozenset) made of `items` in turn, each once; unknown where they are not known."""
    held = added(interp, (), items) if items is not None else None
    return SetVal(held, frozen) if held is not None else UNKNOWN


def elements(interp: Interpreter, v: Value) -> list[Value] | None:
    """What adding `v`'s elements to a set adds: a set's own elements (their order does not matter
    there, unlike iterating one), else the iterable's items when known."""
    v = mutation.live(interp, v)
    if isinstance(v, SetVal):
        return list(v.items)
    return interp.iter_items(v)


def contains(interp: Interpreter, s: SetVal, x: Value) -> bool | None:
    """`x in s`, where it is decided (an unhashable `x` raises: not decided here)."""
    if not hashable(x):
        return None
    k = element_key(x)
    if k is not None:
        held = [element_key(y) for y in s.items]
        if None not in held:
            return k in held
    answers = [_equal(interp, x, y) for y in s.items]
    if True in answers:
        return True
    return False if None not in answers else None


def python_key(v: Value) -> Any:
    """A key as the Python value it is (numbers, strings, tuples of them), else None."""
    if isinstance(v, Const) and type(v.value) in (bool, int, float, str, tuple):
        return v.value
    if isinstance(v, TupleVal) and not v.is_list and not v.spoiled:
        items = [python_key(i) for i in v.items]
        return None if any(i is None for i in items) else tuple(items)
    return None


def keys(call: Call, items: tuple[Value, ...] | list[Value], key: Value | None) -> list[Any] | None:
    """Each item's key (`key(item)`, the item itself without one) as a Python value, else None."""
    out: list[Any] = []
    for x in items:
        k = call.interp.call_value(key, Call(call.interp, call.node, [x], {}, [None], {}, call.env)) \
            if key is not None else x
        py = python_key(k)
        if py is None:
            return None
        out.append(py)
    return out


def extreme(call: Call, items: tuple[Value, ...], key: Value | None, largest: bool) -> Value:
    """`max`/`min` of a set's elements: the one whose key is strictly the largest (smallest) —
    then the order they are visited in does not matter; else unknown."""
    ks = keys(call, items, key)
    if not ks:
        return UNKNOWN  # (an empty set raises ValueError without `default=`: not followed)
    try:
        best = max(ks) if largest else min(ks)
        if sum(1 for k in ks if k == best) != 1:
            return UNKNOWN
    except TypeError:
        return UNKNOWN
    return items[ks.index(best)]


def _strict_key(v: Value) -> Any:
    """`element_key` that also tells apart equal elements of different types (`1`, `1.0`,
    `True`): where an operation keeps one of two equal elements and which one depends on the
    sets' sizes (`&`), the result is claimed only when they are the same."""
    if isinstance(v, Const):
        return ("c", type(v.value).__name__, v.value) if element_key(v) is not None else None
    if isinstance(v, TupleVal):
        items = [_strict_key(i) for i in v.items]
        return None if any(i is None for i in items) or element_key(v) is None else ("t", tuple(items))
    return element_key(v)


def _keyed(s: SetVal) -> dict[Any, Value] | None:
    out: dict[Any, Value] = {}
    for x in s.items:
        k = element_key(x)
        if k is None:
            return None
        out.setdefault(k, x)
    return out


def operate(interp: Interpreter, op: ast.operator, left: Value, right: Value) -> Value | None:
    """`a | b`, `a & b`, `a - b`, `a ^ b` of two known sets (None: not such an operation), as
    CPython computes them: the result is a frozenset when the left operand is one; elements
    equal across the two come from the left one (for `&`, from whichever CPython iterates:
    claimed only when they are the same)."""
    if not (isinstance(left, SetVal) and isinstance(right, SetVal)) \
            or not isinstance(op, (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)):
        return None
    left, right = mutation.live(interp, left), mutation.live(interp, right)
    if not (isinstance(left, SetVal) and isinstance(right, SetVal)):
        return UNKNOWN
    if isinstance(op, ast.BitOr):
        items = added(interp, left.items, right.items)
        return SetVal(items, left.frozen) if items is not None else UNKNOWN
    a, b = _keyed(left), _keyed(right)
    if a is None or b is None:
        return UNKNOWN
    if isinstance(op, ast.BitAnd):
        common = [k for k in a if k in b]
        if any(_strict_key(a[k]) != _strict_key(b[k]) or _strict_key(a[k]) is None for k in common):
            return UNKNOWN
        return SetVal(tuple(a[k] for k in common), left.frozen)
    if isinstance(op, ast.Sub):
        return SetVal(tuple(x for k, x in a.items() if k not in b), left.frozen)
    return SetVal(tuple([x for k, x in a.items() if k not in b] + [x for k, x in b.items() if k not in a]),
                  left.frozen)


def compared(interp: Interpreter, op: ast.cmpop, left: Value, right: Value) -> Value | None:
    """`==`, `!=`, `<=`, `<`, `>=`, `>` between two known sets (equality and subset relations
    of their elements; a set and a frozenset with the same elements are equal); None: not such
    a comparison."""
    if isinstance(op, (ast.Eq, ast.NotEq)) and any(
            isinstance(x, SetVal) and isinstance(y, (TupleVal, DictVal)) for x, y in ((left, right), (right, left))):
        return Const(isinstance(op, ast.NotEq))  # a set is never equal to a tuple, list or dict
    if not (isinstance(left, SetVal) and isinstance(right, SetVal)) \
            or not isinstance(op, (ast.Eq, ast.NotEq, ast.LtE, ast.Lt, ast.GtE, ast.Gt)):
        return None
    left, right = mutation.live(interp, left), mutation.live(interp, right)
    a = _keyed(left) if isinstance(left, SetVal) else None
    b = _keyed(right) if isinstance(right, SetVal) else None
    if a is None or b is None:
        return UNKNOWN
    ka, kb = set(a), set(b)
    answer = {ast.Eq: ka == kb, ast.NotEq: ka != kb, ast.LtE: ka <= kb, ast.Lt: ka < kb,
              ast.GtE: ka >= kb, ast.Gt: ka > kb}[type(op)]
    return Const(answer)

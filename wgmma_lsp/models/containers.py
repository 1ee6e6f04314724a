"""Methods of Python's lists, dicts, tuples, strings and ints, as CPython runs them.

A list's or dict's method that changes it changes the one object every name holding it sees
(interpret/mutation.py: exactly where the change surely happens once, else the object is
spoiled and reads of it are unknown). Methods that only read are computed on known items;
anything not known gives an unknown value, never a guess.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import generators, mutation, operators, set_elements
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    UNKNOWN_INT,
    Const,
    DictVal,
    InstanceVal,
    SetVal,
    SliceVal,
    TupleVal,
    Value,
)
from wgmma_lsp.models.registry import method

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

MAX_ITEMS = 10_000  # a list or string built by a method beyond this is not followed


def seq_items(interp: Any, v: Value) -> tuple[Value, ...] | None:
    """The items iterating over `v` gives, when known."""
    v = mutation.live(interp, v)
    if isinstance(v, TupleVal):
        return v.items
    if isinstance(v, generators.GeneratorVal):
        return generators.consume(interp, v)
    if isinstance(v, DictVal):
        return tuple(Const(k) for k, _ in v.items)
    if isinstance(v, SetVal) and len(v.items) <= 1:
        return v.items  # (two or more: in an order the interpreter does not know)
    if isinstance(v, Const) and isinstance(v.value, (str, tuple, range, list, bytes)) \
            and len(v.value) <= MAX_ITEMS:
        return tuple(Const(x) for x in v.value)
    if isinstance(v, InstanceVal):  # an object of a user class: what its `__iter__` gives
        items = interp.iter_items(v)
        return tuple(items) if items is not None else None
    return None


def sequence_items(interp: Any, v: Value) -> tuple[Value, ...] | None:
    """The items iterating over `v` gives, when known and when iterating it changes nothing
    else: not an iterator or generator (`zip(gen, short)` leaves the rest of `gen` to whoever
    holds it)."""
    v = mutation.live(interp, v)
    if isinstance(v, generators.GeneratorVal):
        return None
    return seq_items(interp, v)


def _equal(interp: Any, a: Value, b: Value) -> bool | None:
    r = operators.item_equal(interp, a, b)
    return bool(r.value) if isinstance(r, Const) else None


def _list(obj: Value) -> TupleVal | None:
    return obj if isinstance(obj, TupleVal) and obj.is_list else None


# -- lists --------------------------------------------------------------------------------------

@method("tuple.append")
def _append(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    if len(call.args) != 1 or call.kwargs or not call.complete:
        mutation.spoil(call.interp, lst)
        return UNKNOWN
    mutation.write(call.interp, lst, lst.items + (call.args[0],))
    return Const(None)


@method("tuple.extend")
def _extend(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    more = seq_items(call.interp, call.args[0]) if len(call.args) == 1 and call.complete else None
    mutation.write(call.interp, lst, lst.items + more if more is not None else None)
    return Const(None)


@method("tuple.insert")
def _insert(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    i = call.args[0] if len(call.args) == 2 and call.complete else None
    if not (isinstance(i, Const) and type(i.value) is int):
        mutation.spoil(call.interp, lst)
        return UNKNOWN
    items = list(lst.items)
    items.insert(i.value, call.args[1])
    mutation.write(call.interp, lst, tuple(items))
    return Const(None)


@method("tuple.pop")
def _pop(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    i = call.args[0] if call.args else Const(-1)
    if not (isinstance(i, Const) and type(i.value) is int) or call.kwargs or len(call.args) > 1:
        mutation.spoil(call.interp, lst)
        return UNKNOWN
    items = list(lst.items)
    try:
        out = items.pop(i.value)
    except IndexError:  # CPython raises: no value, nothing changed
        return UNKNOWN
    mutation.write(call.interp, lst, tuple(items))
    return out


@method("tuple.remove")
def _remove(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    if len(call.args) != 1:
        mutation.spoil(call.interp, lst)
        return UNKNOWN
    for n, item in enumerate(lst.items):
        eq = _equal(call.interp, item, call.args[0])
        if eq is None:
            mutation.spoil(call.interp, lst)
            return UNKNOWN
        if eq:
            mutation.write(call.interp, lst, lst.items[:n] + lst.items[n + 1:])
            return Const(None)
    return UNKNOWN  # ValueError in CPython


@method("tuple.clear")
def _clear(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    mutation.write(call.interp, lst, ())
    return Const(None)


@method("tuple.reverse")
def _reverse(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    mutation.write(call.interp, lst, tuple(reversed(lst.items)))
    return Const(None)


@method("tuple.sort")
def _sort(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    if lst is None:
        return UNKNOWN
    out = sorted_items(lst.items, call)
    mutation.write(call.interp, lst, out)
    return Const(None)


def sorted_items(items: tuple[Value, ...], call: Call) -> tuple[Value, ...] | None:
    """`sorted(items, reverse=...)` of known constants, or tuples of them (`sorted(d.items())`),
    no `key`; else None. The items keep their identity; equal ones their order (a stable sort)."""
    reverse = call.kwargs.get("reverse", Const(False))
    if set(call.kwargs) - {"reverse"} or not isinstance(reverse, Const) or not call.complete:
        return None
    values = [operators.python_value(x, exact=False) for x in items]
    if any(v is operators.NOT_PLAIN for v in values):
        return None
    try:
        order = sorted(range(len(items)), key=values.__getitem__, reverse=bool(reverse.value))
    except TypeError:
        return None
    return tuple(items[i] if not isinstance(items[i], Const) else Const(items[i].value) for i in order)  # type: ignore[attr-defined]


@method("tuple.copy")
def _copy(obj: Value, call: Call) -> Value:
    lst = _list(obj)
    return TupleVal(lst.items, True) if lst is not None else UNKNOWN


@method("tuple.index", "tuple.count")
def _index_count(obj: Value, call: Call) -> Value:
    if not isinstance(obj, TupleVal) or len(call.args) != 1 or call.kwargs:
        return UNKNOWN
    count = 0
    for n, item in enumerate(obj.items):
        eq = _equal(call.interp, item, call.args[0])
        if eq is None:
            return UNKNOWN_INT
        if eq:
            if call.node is not None and isinstance(call.node.func, ast.Attribute) \
                    and call.node.func.attr == "index":
                return Const(n)
            count += 1
    is_index = call.node is not None and isinstance(call.node.func, ast.Attribute) \
        and call.node.func.attr == "index"
    return UNKNOWN if is_index else Const(count)


# -- dicts --------------------------------------------------------------------------------------

def _key(v: Value) -> tuple[bool, Any]:
    if isinstance(v, Const):
        try:
            hash(v.value)
        except TypeError:
            return False, None
        return True, v.value
    return False, None


def set_item(interp: Any, d: DictVal, key: Value, value: Value) -> None:
    """`d[key] = value`."""
    known, k = _key(key)
    if not known:
        mutation.spoil(interp, d)
        return
    mutation.write(interp, d, mutation.dict_items(list(d.items) + [(k, value)]))


def del_item(interp: Any, obj: Value, key: Value) -> None:
    """`del obj[key]` of a dict or list."""
    if isinstance(obj, DictVal):
        known, k = _key(key)
        pairs = dict(obj.items)
        if not known:
            mutation.spoil(interp, obj)
        elif k in pairs:
            del pairs[k]
            mutation.write(interp, obj, tuple(pairs.items()))
    elif isinstance(obj, TupleVal) and obj.is_list:
        items = list(obj.items)
        i = key.value if isinstance(key, Const) else None
        try:
            if isinstance(i, int) and not isinstance(i, bool):
                del items[i]
            else:
                raise TypeError
        except (IndexError, TypeError):
            mutation.spoil(interp, obj)
            return
        mutation.write(interp, obj, tuple(items))


def in_place(interp: Any, obj: TupleVal | DictVal | SetVal, op: ast.operator, rhs: Value) -> bool:
    """`obj op= rhs` for a list, dict or set: done in place, True; False when Python would not do it
    in place (a TypeError, or an operator lists do not change themselves by)."""
    if isinstance(obj, TupleVal) and isinstance(op, ast.Add):
        more = seq_items(interp, rhs)
        mutation.write(interp, obj, obj.items + more if more is not None else None)
        return True
    if isinstance(obj, TupleVal) and isinstance(op, ast.Mult):
        n = rhs.value if isinstance(rhs, Const) else None
        if isinstance(n, int) and not isinstance(n, bool) and len(obj.items) * max(n, 0) <= MAX_ITEMS:
            mutation.write(interp, obj, obj.items * n)
        else:
            mutation.spoil(interp, obj)
        return True
    if isinstance(obj, DictVal) and isinstance(op, ast.BitOr):
        more = _pairs(interp, rhs) if isinstance(mutation.live(interp, rhs), DictVal) else None
        mutation.write(interp, obj, mutation.dict_items(list(obj.items) + more) if more is not None else None)
        return True
    if isinstance(obj, SetVal):  # `s |= t` adds t's elements; `-=`, `&=`, `^=`: not followed
        other = mutation.live(interp, rhs)
        mutation.write(interp, obj, set_elements.added(interp, obj.items, other.items)
                       if isinstance(op, ast.BitOr) and isinstance(other, SetVal) else None)
        return True
    return False


def _slice_bound(v: Value) -> tuple[bool, Any]:
    """A slice's start/stop/step as Python has it: (known, value)."""
    if isinstance(v, Const) and (v.value is None or type(v.value) is int):
        return True, v.value
    return False, None


def _set_list_slice(interp: Any, lst: TupleVal, index: SliceVal, value: Value) -> None:
    """`lst[a:b:c] = items`, computed by CPython on the list's items (its length can change;
    an extended slice of another length is a ValueError: nothing changes); unknown bounds or
    items spoil the list."""
    bounds = [_slice_bound(b) for b in (index.start, index.stop, index.step)]
    value = mutation.live(interp, value)
    if not all(known for known, _ in bounds) or not isinstance(value, TupleVal):
        mutation.spoil(interp, lst)
        return
    items = list(lst.items)
    try:
        items[slice(*(b for _, b in bounds))] = list(value.items)
    except ValueError:
        return  # CPython raises: the list is unchanged
    mutation.write(interp, lst, tuple(items))


def set_list_item(interp: Any, lst: TupleVal, index: Value, value: Value) -> None:
    """`lst[i] = value` (an int index, or a slice of known bounds: `shape[a:a + 1] = (n, m)`);
    an unknown index spoils the list."""
    if isinstance(index, SliceVal):
        _set_list_slice(interp, lst, index, value)
        return
    i = index.value if isinstance(index, Const) else None
    if not (isinstance(i, int) and not isinstance(i, bool)) or not -len(lst.items) <= i < len(lst.items):
        if isinstance(i, int) and not isinstance(i, bool):
            return  # IndexError in CPython: nothing changes
        mutation.spoil(interp, lst)
        return
    items = list(lst.items)
    items[i] = value
    mutation.write(interp, lst, tuple(items))


def _pairs(interp: Any, v: Value) -> list[tuple[Any, Value]] | None:
    v = mutation.live(interp, v)
    if isinstance(v, DictVal):
        return list(v.items)
    if isinstance(v, TupleVal):
        out = []
        for item in v.items:
            item = mutation.live(interp, item)
            if not (isinstance(item, TupleVal) and len(item.items) == 2):
                return None
            known, k = _key(item.items[0])
            if not known:
                return None
            out.append((k, item.items[1]))
        return out
    return None


@method("DictVal.update")
def _update(obj: Value, call: Call) -> Value:
    if not isinstance(obj, DictVal):
        return UNKNOWN
    pairs: list[tuple[Any, Value]] | None = list(obj.items)
    if len(call.args) > 1 or not call.complete:
        pairs = None
    elif call.args:
        more = _pairs(call.interp, call.args[0])
        pairs = pairs + more if more is not None else None
    if pairs is not None:
        pairs += list(call.kwargs.items())
    mutation.write(call.interp, obj, mutation.dict_items(pairs) if pairs is not None else None)
    return Const(None)


@method("DictVal.setdefault")
def _setdefault(obj: Value, call: Call) -> Value:
    if not isinstance(obj, DictVal) or not 1 <= len(call.args) <= 2 or call.kwargs:
        return UNKNOWN
    known, k = _key(call.args[0])
    if not known:
        mutation.spoil(call.interp, obj)
        return UNKNOWN
    for key, v in obj.items:
        if key == k:
            return v
    default = call.args[1] if len(call.args) == 2 else Const(None)
    mutation.write(call.interp, obj, obj.items + ((k, default),))
    return default


@method("DictVal.pop")
def _dict_pop(obj: Value, call: Call) -> Value:
    if not isinstance(obj, DictVal) or not 1 <= len(call.args) <= 2 or call.kwargs:
        return UNKNOWN
    known, k = _key(call.args[0])
    if not known:
        mutation.spoil(call.interp, obj)
        return UNKNOWN
    pairs = dict(obj.items)
    if k in pairs:
        out = pairs.pop(k)
        mutation.write(call.interp, obj, tuple(pairs.items()))
        return out
    return call.args[1] if len(call.args) == 2 else UNKNOWN  # KeyError in CPython


@method("DictVal.clear")
def _dict_clear(obj: Value, call: Call) -> Value:
    if isinstance(obj, DictVal):
        mutation.write(call.interp, obj, ())
        return Const(None)
    return UNKNOWN


@method("DictVal.get")
def _get(obj: Value, call: Call) -> Value:
    if not isinstance(obj, DictVal) or not 1 <= len(call.args) <= 2 or call.kwargs:
        return UNKNOWN
    known, k = _key(call.args[0])
    if not known:
        return UNKNOWN
    for key, v in obj.items:
        if key == k:
            return mutation.live(call.interp, v)
    return call.args[1] if len(call.args) == 2 else Const(None)


@method("DictVal.copy")
def _dict_copy(obj: Value, call: Call) -> Value:
    return DictVal(obj.items) if isinstance(obj, DictVal) else UNKNOWN


@method("DictVal.keys", "DictVal.values", "DictVal.items")
def _views(obj: Value, call: Call) -> Value:
    """A view, as the tuple of what iterating over it gives (it is iterated, listed or counted)."""
    if not isinstance(obj, DictVal) or call.args or call.kwargs:
        return UNKNOWN
    which = call.node.func.attr if call.node is not None and isinstance(call.node.func, ast.Attribute) else ""
    if which == "keys":
        return TupleVal(tuple(Const(k) for k, _ in obj.items))
    if which == "values":
        return TupleVal(tuple(v for _, v in obj.items))
    if which == "items":
        return TupleVal(tuple(TupleVal((Const(k), v)) for k, v in obj.items))
    return UNKNOWN


# -- strings and ints: pure methods on constants ------------------------------------------------

_STR_METHODS = ("upper", "lower", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace",
                "split", "title", "capitalize", "count", "find", "isdigit", "isalpha", "zfill",
                "removeprefix", "removesuffix", "join", "rsplit", "partition", "isupper", "islower")


def _str_method(name: str):
    def run(obj: Value, call: Call) -> Value:
        if not (isinstance(obj, Const) and isinstance(obj.value, str)) or call.kwargs or not call.complete:
            return UNKNOWN
        args: list[Any] = []
        for a in call.args:
            if name == "join":
                items = seq_items(call.interp, a)
                if items is None or not all(isinstance(x, Const) for x in items):
                    return UNKNOWN
                args.append([x.value for x in items])  # type: ignore[attr-defined]
            elif isinstance(a, Const):
                args.append(a.value)
            else:
                return UNKNOWN
        if name == "zfill" and args and isinstance(args[0], int) and args[0] > MAX_ITEMS:
            return UNKNOWN
        if name == "replace" and len(args) >= 2 and isinstance(args[1], str) \
                and len(obj.value) * max(1, len(args[1])) > MAX_ITEMS:
            return UNKNOWN
        try:
            out = getattr(obj.value, name)(*args)
        except Exception:  # what CPython raises here: no value
            return UNKNOWN
        if isinstance(out, (list, tuple)):
            return TupleVal(tuple(Const(x) for x in out), isinstance(out, list))
        return Const(out)
    return run


for _name in _STR_METHODS:
    method(f"str.{_name}")(_str_method(_name))


@method("int.bit_length")
def _bit_length(obj: Value, call: Call) -> Value:
    if isinstance(obj, Const) and type(obj.value) is int and not call.args:
        return Const(obj.value.bit_length())
    return UNKNOWN_INT

"""Lists, dicts and sets change in place, as in Python.

A list (`TupleVal(is_list=True)`), dict (`DictVal`) or set (`SetVal`, not a frozenset) is one
object however many names, items, attributes or parameters hold it: `b = a; b.append(3)` changes
`a` too, and a helper that appends to the list it was given changes its caller's. The interpreter
follows a change exactly (it replaces the object's items in place) when it is sure the change
happens once, here:

- on a path that certainly runs (not one branch of an undecided `if`, not a loop body run for
  an unknown number of times, not after an early `return`/`break` that may have been taken),
  or to an object made on this path after its uncertainty began (`made_on_this_path`: a list
  built after `if unknown: self.skipTest(...)` exists only where the test goes on),
- not in a pass that only computes state (it reruns code that already ran),
- to an object made after module code, or by module code while it runs: module code runs
  once, in order; the contexts that follow it (entry points, functions analysed with nothing
  known) are alternatives, so module code's objects are not theirs to change exactly. (A
  sweep's iterations run one after the other, as in CPython: their writes are exact.)

A set has no order to join two paths' items by, so a change that is not exact spoils it.

Otherwise the object is *spoiled*: every later read of it (through a name, an attribute, an
item, a default) is unknown. A container of another module's summary (shared by every
analysis, `born == 0`) is never changed: its spoiling is this interpreter's own.

A call that changes an object made before it is not memoised (a replay would not change it).
"""

from __future__ import annotations

import bisect

from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ClassVal,
    DictVal,
    InstanceVal,
    SetVal,
    TupleVal,
    Value,
    join,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: The interpreter (interp.Interpreter), as a type: not imported, since it imports this module.
    Interpreter = Any

Container = TupleVal | DictVal | SetVal


def is_mutable(v: Value) -> bool:
    return (isinstance(v, TupleVal) and v.is_list) or isinstance(v, DictVal) \
        or (isinstance(v, SetVal) and not v.frozen)


def live(interp: "Interpreter", v: Value) -> Value:
    """`v` as a read sees it: unknown once spoiled."""
    if isinstance(v, (TupleVal, DictVal, SetVal)) and (v.spoiled or id(v) in interp.spoiled_shared):
        return UNKNOWN
    return v


def on_certain_path(interp: "Interpreter") -> bool:
    return interp.certain and not interp.silent \
        and not any(f.maybe_returned for f in interp.stack) \
        and not any(lp.maybe_stopped for lp in interp.loops if lp is not None)


def made_on_this_path(interp: "Interpreter", born: int) -> bool:
    """Whether an object born at `born` was made after every uncertainty of the path running
    now began (an unknown branch taken, a `return` that may have run, a loop iteration that
    may have been left): it exists only on the paths that reach here, so a change to it is
    exact although the path is uncertain. (On a certain path, every object is.)"""
    if born == 0:
        return False
    if interp.silent and not (interp.certain and interp.quiet_born is not None and born >= interp.quiet_born):
        return False  # (a silent pass' own objects, made on a certain path, are as a run's)
    if not interp.certain and born < interp.uncertain_born:
        return False
    if any(f.maybe_returned and born < f.uncertain_born for f in interp.stack):
        return False
    return not any(lp is not None and lp.maybe_stopped and born < lp.uncertain_born for lp in interp.loops)


def _ours(interp: "Interpreter", born: int) -> bool:
    """Whether an object born at `born` belongs to the code running now (see the module doc)."""
    # (A sweep's iterations run in order, each after the one before, as in CPython: a write to
    # an object made before the loop is exact there, and stops the reuse of iterations.)
    return born != 0 and born >= interp.shared_born


def changes_exactly(interp: "Interpreter", born: int) -> bool:
    """Whether a change to an object born at `born` made here is followed exactly (an object of
    the code running now, on a certain path or made on this one), not joined or spoiled."""
    return _ours(interp, born) and made_on_this_path(interp, born)


def note_write(interp: "Interpreter", born: int, obj: Value | None = None, attr: str | None = None) -> None:
    """An object born at `born` is written: the calls being memoised that it predates are not
    stored, and a sweep iteration writing what it did not make is not repeated; and the calls
    stored that read objects of their module may not be replayed after it (`read_outside`)."""
    serial = interp.write_serial
    interp.write_serial = serial + 1
    minima = interp.write_minima  # (serial, born), born increasing: each the least born since
    while minima and minima[-1][1] >= born:
        minima.pop()
    minima.append((serial, born))
    for entry in interp.captures:
        if born < entry.born:
            entry.writes_outside = True
    if born < interp.iteration_born:
        interp.outside_writes += 1
        if obj is not None and interp.sweep_depth and len(interp.outside_written) < 10_000:
            interp.outside_written.append((obj, attr))


def written_since(interp: "Interpreter", serial: int, born: int) -> bool:
    """Whether an object born before `born` was written since the write numbered `serial`."""
    minima = interp.write_minima
    i = bisect.bisect_left(minima, serial, key=lambda m: m[0])
    return i < len(minima) and minima[i][1] < born


def read_outside(interp: "Interpreter", v: Value) -> None:
    """A running call read `v` through a name of an enclosing scope or of a module (not its
    arguments, which its memo key holds): if `v` can change in place (a list, dict or set, an
    instance, a class) and is older than a call being memoised, that call's replay is valid
    only while no object older than the call was written since its run (`written_since`,
    `MemoEntry.reads_outside`): whatever it read through such a name is such an object."""
    if isinstance(v, (InstanceVal, ClassVal)) or is_mutable(v):
        born = getattr(v, "born", 0)
        for entry in interp.captures:
            if born < entry.born:
                entry.reads_outside = True


def compared_identity(interp: "Interpreter", obj: Value) -> None:
    """A running call found `obj` to be the very object it is compared with (`a is b`): a memo key
    holds objects by their contents, not which are one (`f(x, x)` and `f(x, y)` are equal
    calls), so a call being memoised that `obj` is older than is not stored."""
    born = getattr(obj, "born", 0)
    for entry in interp.captures:
        if born < entry.born:
            entry.writes_outside = True


def spoil(interp: "Interpreter", obj: Container) -> None:
    note_write(interp, obj.born, obj)
    if obj.born == 0:
        interp.spoiled_shared[id(obj)] = obj
    else:
        object.__setattr__(obj, "spoiled", True)
    if interp.spoil_watch is not None:
        interp.spoil_watch(obj)


def write(interp: "Interpreter", obj: Container, items: tuple | None) -> None:
    """Give `obj` the items `items` (None: not known), in place where that is exact; joined with
    what it held where the change may not happen; else spoiled."""
    if obj.spoiled or id(obj) in interp.spoiled_shared:
        return
    if items is None or obj.born == 0:
        spoil(interp, obj)
        return
    if not _ours(interp, obj.born) or not made_on_this_path(interp, obj.born):
        items = _joined(obj, items) if not isinstance(obj, SetVal) else None  # (no order to join by)
        if items is None:
            spoil(interp, obj)
            return
    note_write(interp, obj.born, obj)
    object.__setattr__(obj, "items", items)


def _joined(obj: Container, items: tuple) -> tuple | None:
    """The items of `obj` if the change to `items` may or may not have happened, when the
    structure is the same either way (same length, same keys), else None."""
    old = obj.items
    if len(old) != len(items):
        return None
    if isinstance(obj, DictVal):
        if [k for k, _ in old] != [k for k, _ in items]:
            return None
        return tuple((k, join(a, b)) for (k, a), (_, b) in zip(old, items))
    return tuple(join(a, b) for a, b in zip(old, items))


def set_attr(interp: "Interpreter", obj: InstanceVal, attr: str, value: Value) -> None:
    """`obj.attr = value`: exact where a list's change is (an object of the code running now,
    on a certain path or made on this one: `__init__` of an object made after `if unknown:
    raise ...`), else joined with what the attribute held (unknown if it held nothing)."""
    note_write(interp, obj.born, obj, attr)
    if not changes_exactly(interp, obj.born):
        if attr in obj.attrs:
            value = join(obj.attrs[attr], value)
        else:
            value = UNKNOWN
    obj.attrs[attr] = value


def forget_writes(interp: "Interpreter", since: int) -> None:
    """The objects changed by a sweep's iterations (from entry `since` of the log on), when some
    of its iterations were left out: a list or dict is spoiled, an attribute unknown."""
    for obj, attr in interp.outside_written[since:]:
        if isinstance(obj, (TupleVal, DictVal, SetVal)):
            if obj.born == 0:
                interp.spoiled_shared[id(obj)] = obj
            else:
                object.__setattr__(obj, "spoiled", True)
        elif isinstance(obj, InstanceVal) and attr is not None and not obj.shared:
            obj.attrs[attr] = UNKNOWN
    del interp.outside_written[since:]


def dict_items(pairs: list[tuple[Any, Value]]) -> tuple[tuple[Any, Value], ...]:
    """Key/value pairs as a dict keeps them: a repeated key keeps its first place, its last value."""
    out: dict[Any, Value] = {}
    for k, v in pairs:
        out[k] = v
    return tuple(out.items())

"""The interpreter's limits, its exceptions and call frames, shared by its parts."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.origin import ModuleOrigin
from wgmma_lsp.interpret.values import (
    next_born,
    AllocSpec,
    ArrayVal,
    DTypeVal,
    ShapeDtypeVal,
    Const,
    FuncVal,
    RefVal,
    TupleVal,
    Unknown,
    Value,
    Wrapped,
    is_unknown,
)

MAX_DEPTH = 40
MAX_STEPS = 400_000
MAX_RECORD_VALUES = 6
MAX_UNROLL = 64
DRIVER_NAMES = frozenset({"main", "<lambda>"})
_DRIVER_PREFIXES = ("main", "run", "bench", "tune", "example", "sweep")


def is_driver(name: str) -> bool:
    """A function that drives kernels (`main`, `_run_example`, `benchmark`): the calls it
    makes are the call sites contexts are named by, not the call of the driver itself."""
    return name in DRIVER_NAMES or name.lstrip("_").startswith(_DRIVER_PREFIXES)


CHECK_EVERY = 2048  # steps between checks for cancellation


class Budget(Exception):
    """The step budget ran out: the analysis stops with what it has."""


class Cancelled(Budget):
    """A newer version of the document arrived: this analysis is abandoned."""


# The cancellation event of the analysis running on this thread (set by the driver), for
# interpreters made along the way (the user's other modules) that are not given one.
CURRENT_CANCEL = threading.local()


@dataclass
class Frame:
    """A call of a user function being interpreted."""
    func: FuncVal | None
    env: Env | None = None  # its local scope (entry/provider_result.py reads its bindings)
    returns: list[Value] = field(default_factory=list)
    returned: bool = False
    maybe_returned: bool = False  # returned (or raised) on some path already: the rest may not run
    # When `maybe_returned` became true (an object count, values.next_born): what the code
    # running now makes after that exists only on the paths that go on (mutation.py).
    uncertain_born: int = 0
    # How many paths returned (or raised) in it so far, each counted once (followon.RunBase:
    # whether one did since a run began).
    ends: int = 0
    # What the `if`s this path is inside prove about sizes (interpret/path_equalities.py).
    assumed: tuple = ()
    returns_assumed: dict = field(default_factory=dict)  # index in `returns` -> its equations

    # (`maybe_returned` is set only through `set_maybe_returned`, which keeps `uncertain_born`:
    # a `__setattr__` doing it cost a Python call on every attribute write of every frame.)
    def set_maybe_returned(self, value: bool) -> None:
        mark_uncertain(self, bool(value))
        self.maybe_returned = value


def mark_uncertain(obj: object, uncertain: bool) -> None:
    """Keep `obj.uncertain_born` (a frame's, a sweep iteration's): the object count when its
    path first became uncertain, 0 while it is not."""
    object.__setattr__(obj, "uncertain_born", (obj.uncertain_born or next_born()) if uncertain else 0)  # type: ignore[attr-defined]


def release_scopes(scopes: set[Env]) -> None:
    """Empty the scopes an interpreter bound functions and classes in (it was dropped): the
    cycles scope -> function -> closure -> scope are broken, and reference counting frees the
    rest of the analysis (its syntax tree, values and records) right away."""
    for env in scopes:
        env.vars.clear()
        env.parent = None
    scopes.clear()


def _value_kind(v: Value) -> str:
    """The key models are registered under for methods, attributes and indexing."""
    kind = _KIND_BY_TYPE.get(type(v))
    if kind is None:
        kind = _KIND_BY_TYPE[type(v)] = _kind_of_type(v)
    if kind is _WRAPPED:
        return f"wrapped:{v.api}"  # type: ignore[attr-defined]
    if kind is _CONST:
        return type(v.value).__name__  # type: ignore[attr-defined]
    return kind


_WRAPPED, _CONST = "<wrapped>", "<const>"  # kinds that depend on the value, not only its type
_KIND_BY_TYPE: dict[type, str] = {}  # a value type -> its kind, or _WRAPPED/_CONST


def _kind_of_type(v: Value) -> str:
    """`_value_kind`'s tests, in their order; each depends on the value's type alone."""
    if isinstance(v, ArrayVal):
        return "array"
    if isinstance(v, RefVal):
        return "ref"
    if isinstance(v, TupleVal):
        return "tuple"
    if isinstance(v, AllocSpec):
        return "alloc"
    if isinstance(v, ShapeDtypeVal):
        return "sds"
    if isinstance(v, DTypeVal):
        return "dtype"
    if isinstance(v, Wrapped):
        return _WRAPPED
    if isinstance(v, Const):
        return _CONST
    return type(v).__name__


def _partial(v: Value) -> bool:
    """An array or ref value with an unknown dtype or size, or no value at all."""
    if isinstance(v, RefVal):
        v = v.inner
    if isinstance(v, ArrayVal):
        return v.dtype is None or v.shape is None or any(d is None for d in v.shape)
    return isinstance(v, Unknown)


def _informative(v: Value) -> bool:
    """Does a recorded value say something a hover can show in full?"""
    if isinstance(v, (ArrayVal, RefVal)):
        return "?" not in v.describe()
    return not is_unknown(v)


def _origin_of(env: Env | None) -> ModuleOrigin | None:
    """The user module a scope belongs to (None: the analysed document)."""
    while env is not None:
        if env.parent is None:
            return env.origin  # type: ignore[return-value]
        env = env.parent
    return None

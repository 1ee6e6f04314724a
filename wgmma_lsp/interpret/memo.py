"""Calls analysed once per distinct (function, arguments): a second identical call (the same
kernel reached from two contexts, or from a generic and a concrete run with nothing to bind)
replays what the first found instead of running the body again.

The key is structural for immutable abstract values, lists, dicts, sets and objects of user
classes (equal contents, not the same object: a replay gives the replaying call its own objects,
or the call runs, replay_objects.py), and by identity for functions' scopes and the rest; a value
that cannot be fingerprinted makes the call not memoised. Only calls that recorded and reported
(not silent passes) are stored; a replay adds the current context to each finding and to each
function the call entered, and makes a finding certain only when it was certain inside the call
and the replaying path is certain too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wgmma_lsp.interpret.generators import GeneratorVal
from wgmma_lsp.interpret.mutation import written_since
from wgmma_lsp.interpret.replay_objects import (
    AS_IS, GIVEN, UNSAFE, copy, held, holds_nothing, plan, same_given,
)
from wgmma_lsp.interpret.values import (
    UNKNOWN, Const, DictVal, FuncVal, InstanceVal, PartialVal, TupleVal, Value, next_born,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 6


class _NoKey(Exception):
    pass


@dataclass
class MemoEntry:
    """What one run of a call gave, to replay it."""
    result: Value | None = None
    findings: list[tuple[Any, bool]] = field(default_factory=list)  # (Finding, certain when found)
    entered: set[int] = field(default_factory=set)
    outer_certain: bool = True
    observed: set = field(default_factory=set)  # swept values the body read (interpret/observe.py)
    # Objects born before `born` that the call changed (interpret/mutation.py): a replay would
    # not change them, so such a call is not stored.
    born: int = field(default_factory=next_born)
    writes_outside: bool = False
    # It read an object of a module or an enclosing scope that may change in place (not through
    # its arguments, which the key holds): replayed only while no object older than the call
    # was written since `write_serial`, the count of writes when it was stored
    # (mutation.read_outside, mutation.written_since).
    reads_outside: bool = False
    write_serial: int = 0
    raised: bool = False  # the call raised on every path: a replay ends the caller's path too
    # The call held a whole kernel launch that counts shared memory (models/smem_budget.py):
    # stored since, a replay counting the `steps` its run took (a budget is spent as if it ran).
    launches: bool = False
    steps: int = 0
    ran_certain: bool = True  # whether the path calling it was certain (see `replays_here`)
    # `interp.report_serial` when its run began: a finding dropped by an end of JAX's run from
    # before it is kept for replays, not one dropped by an end inside it (interpret/followon.py)
    started: int = 0
    # The depth limit or the recursion guard cut a call in the run (or in a run it replayed):
    # what it did depended on the stack it ran on (`cut`; foreign_memo.py).
    was_cut: bool = False
    # A certain lowering error was pending in it (interpret/followon.py): a replay pends it again.
    lowering_end: bool = False
    reach: int = 0  # how much deeper than its own call the run made calls (`interp.max_stack`)
    # How a replay gives the result (replay_objects.plan): as it is, with the objects the run made
    # made anew, or that and only for a call given the very objects the run was given (`given`,
    # as replay_objects.held lists them).
    replay: int = AS_IS
    given: tuple = ()

    def reads_unchanged(self, interp: Any) -> bool:
        """Whether what the run read outside its arguments is as it was: no object older than
        the call written since, if it read one (mutation.read_outside). Every memo asks it."""
        return not (self.reads_outside and self.write_serial != interp.write_serial
                    and written_since(interp, self.write_serial, self.born))

    def stands_for(self, func: FuncVal, call: Any) -> bool:
        """Whether a replay gives `call` its own objects: a result holding objects the run was
        given is replayed only for a call given the very same ones (replay_objects.py). Every
        memo asks it."""
        return self.replay != GIVEN or same_given(self.given, held(func, call.args, call.kwargs))

    def result_for_replay(self) -> Value:
        """The result, for a call it is replayed for: the objects the run made made anew (each
        call makes its own), those it was given as they are (`stands_for`)."""
        if self.result is None:
            return UNKNOWN
        if self.replay == AS_IS:
            return self.result
        return copy(self.result, self.born)

    def planned(self, given: list[Value]) -> None:
        """After its run, given `given` (replay_objects.held): how a replay gives its result
        (replay_objects.plan); a run whose result a replay cannot give is not stored
        (`writes_outside`, as every memo reads it)."""
        result = self.result
        if result is None or holds_nothing(result):
            return
        self.replay = plan(result, self.born, given)
        if self.replay == UNSAFE:
            self.writes_outside = True
            return
        if self.replay == GIVEN:
            self.given = tuple(given)
        if self.replay != AS_IS:  # (the caller may change what it got: the entry keeps its own)
            self.result = copy(result, self.born)

    def replays_here(self, interp: Any) -> bool:
        """Whether a replay stands for a run of the call now. A kernel launch's shared memory
        depends on the calling path's certainty (counted on certain paths only) and is kept
        for hovers, not replayed: such a call replays only on a path as certain as its run's;
        and, as in foreign_memo.py, runs when its steps would reach the next checkpoint (a
        budget or cancellation check)."""
        if not self.reads_unchanged(interp):
            return False
        return not self.launches or (self.ran_certain == interp.certain
                                     and interp.steps + self.steps <= interp._check_at)


def replayed(interp: Any, hit: MemoEntry) -> None:
    """What a replay of `hit` does besides its result and findings, for every memo: the runs
    capturing it depended on the stack as its run did (`cut`), went as deep (`reach`), and read
    what it read outside its arguments (`reads_outside`)."""
    if hit.was_cut:
        cut(interp)
    deepest = len(interp.stack) + hit.reach
    if deepest > interp.max_stack:
        interp.max_stack = deepest
    if hit.reads_outside:
        for outer in interp.captures:
            outer.reads_outside = True


def cut(interp: Any) -> None:
    """The depth limit or the recursion guard cut a call (or a replay stands for a run where one
    did): every run being captured now depended on the stack it ran on."""
    for entry in interp.captures:
        entry.was_cut = True


def fingerprint(v: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise _NoKey
    kind = _KINDS.get(type(v))
    if kind is None:
        kind = _kind(v)
    if kind is _CONST:
        try:
            hash(v.value)
        except TypeError:
            raise _NoKey from None
        return ("c", type(v.value).__name__, v.value)
    if kind is _TUPLE:
        return ("t", type(v).__name__, v.is_list, id(getattr(v, "cls", None)),  # (a NamedTuple's class)
                tuple([fingerprint(i, depth + 1) for i in v.items]))
    if kind is _FUNC:
        return ("f", id(v.node), id(v.closure),
                fingerprint(v.bound_self, depth + 1) if v.bound_self is not None else None)
    if kind is _PARTIAL:
        return ("p", fingerprint(v.func, depth + 1), tuple([fingerprint(a, depth + 1) for a in v.args]),
                tuple(sorted([(k, fingerprint(a, depth + 1)) for k, a in v.kwargs.items()])))
    if kind is _INSTANCE:
        return ("i", id(v.cls), tuple(sorted([(k, fingerprint(a, depth + 1)) for k, a in v.attrs.items()])))
    if kind is _DICT:
        return ("d", tuple([(k, fingerprint(a, depth + 1)) for k, a in v.items]))
    if kind is _VALUE:
        try:
            hash(v)
        except TypeError:
            raise _NoKey from None
        return v
    raise _NoKey  # a generator (its position changes as it is iterated: never the same argument
    # twice), or not a value


_CONST, _TUPLE, _FUNC, _PARTIAL, _INSTANCE, _DICT, _VALUE, _NONE = (
    "const", "tuple", "func", "partial", "instance", "dict", "value", "none")
_KINDS: dict[type, str] = {}  # a type -> which of fingerprint's cases it is (tested once per type)


def _kind(v: Any) -> str:
    """fingerprint's case for `v`, by its tests in their order (each depends on the type alone)."""
    if isinstance(v, Const):
        kind = _CONST
    elif isinstance(v, TupleVal):
        kind = _TUPLE
    elif isinstance(v, FuncVal):
        kind = _FUNC
    elif isinstance(v, PartialVal):
        kind = _PARTIAL
    elif isinstance(v, InstanceVal):
        kind = _INSTANCE
    elif isinstance(v, DictVal):
        kind = _DICT
    elif isinstance(v, GeneratorVal):
        kind = _NONE
    elif isinstance(v, Value):
        kind = _VALUE
    else:
        kind = _NONE
    _KINDS[type(v)] = kind
    return kind


def observed_call_key(interp: Any, func: FuncVal, call: Any) -> Any | None:
    """`call_key` of a `Call` in the interpreter's state, its look at the values kept off the
    observation books (a key is books: equal keys give equal runs either way)."""
    if interp.observing:
        with interp.obs.unobserved():
            return call_key(func, call.args, call.kwargs, call.generic, call.complete, interp.memo_state())
    return call_key(func, call.args, call.kwargs, call.generic, call.complete, interp.memo_state())


def call_key(func: FuncVal, args: list[Value], kwargs: dict[str, Value], generic: bool,
             complete: bool, kernel: tuple) -> Any | None:
    """The memo key of a call, or None when it cannot be memoised; `kernel` is the running
    kernel's part of it (`KernelState.memo_key()`)."""
    a = func.node.args
    takes_nothing = not (a.posonlyargs or a.args or a.vararg or a.kwonlyargs or a.kwarg)
    try:
        # (lists, not generators, inside: this runs for every memoised call)
        return (fingerprint(func), tuple([fingerprint(x) for x in args]),
                tuple(sorted([(k, fingerprint(x)) for k, x in kwargs.items()])),
                None if takes_nothing else (generic, complete), kernel)
    except (_NoKey, RecursionError):
        return None


def first_run_state(interp: Any) -> tuple:
    """What of the interpreter's state a first run may change so that an equal run after it
    takes fewer steps: the functions entered (a callback nothing entered is analysed with nothing
    known, `unknown_call`; `pallas_call` too), the calls the document's memo stores (replayed,
    they count no steps) and the functions defined. A run that left it as it was took the steps
    an equal run after it takes: every memo it filled besides (this one's, the silent passes')
    is one whose second run runs again, as the first did (foreign_memo.py, silent_memo.py)."""
    return len(interp.entered), len(interp.memo), len(interp.defined)

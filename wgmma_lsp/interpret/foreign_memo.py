"""Calls of the user's other modules' functions, analysed once per distinct arguments within one
analysis, as the document's own module-level functions are (`memo.py`).

Why: a test file runs its package's op once per test and parameter set, and the op's layers
(dispatch, config, helpers) are called again and again with the same arguments: in tokamax's
test files about four calls in five of another module's functions repeat an earlier call with
equal arguments, and ran its body again.

A replay stands for a run only where nothing could tell them apart, so the analysis finds, notes
and cuts exactly what it did without this memo:

- the steps the run took are counted again on each replay: every budget (a piece's step limit,
  the sweep budget that decides how many test parameter sets run) is spent as if the body ran;
  a replay that would reach the next checkpoint (a budget or cancellation check) runs instead;
- a call replays from its third equal call on, or from its second when its first run was
  `clean` (`memo.first_run_state`): a first run may take more steps than the ones after it,
  and a replay counts the steps of the run it stands for;
- another module's findings sit at the call in the analysed document that led there
  (`interp_records._into_document`): a run's findings are replayed only for that same call site;
  a run that found nothing stands for any call site, but not a run made with no call site in
  the document (what it found was dropped, not absent);
- the depth limit and the recursion guard cut calls by the stack they are made on: a run
  neither cut stands for an equal call on any stack where its calls are not cut either (it went
  less deep than the room left, and none of the functions it entered is running outside it);
  a run one of them cut, or one that found something (its findings carry where it was called
  from), stands only for a call on a stack of the same depth, with the same other modules'
  functions running;
- a run that entered one of the document's functions (a callback: it records hovers, and its
  own memo makes a second run cheaper than the first) or changed older objects is not stored;
- a run that launched a kernel replays only on a path as certain as its own (`memo.py`);
- a replay's result is the replaying call's own objects, as every memo's (`replay_objects.py`).
"""

from __future__ import annotations


from wgmma_lsp.interpret import silent_memo
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.interp_base import MAX_DEPTH, _origin_of
from wgmma_lsp.interpret.memo import MemoEntry, first_run_state, observed_call_key
from wgmma_lsp.interpret.values import FuncVal, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

ENABLED = True  # (benchmarks compare with it off)


def applies(interp: Any, func: FuncVal) -> bool:
    """A module-level function of another of the user's modules, called by an analysis of a
    document (not while another module's summary is built) once its module code ran."""
    env = func.closure
    return ENABLED and interp.home is None and env.parent is None and env.origin is not None \
        and env is not interp.module_env


class ForeignEntry(MemoEntry):
    steps: int = 0
    entry_span: Any = None  # the document's call its findings sit at (None: none)
    # Run a second time: the first run of a call may cost more steps than the ones after it
    # (what it looked up once is cached), and a replay counts the steps of one after it.
    again: bool = False
    # Or a first run that changed nothing a later equal run's steps depend on: it took the
    # steps the second would (`first_run_state`).
    clean: bool = False
    stack_key: Any = None  # the stack it ran on (`_stack_key`)


def _stack_key(stack: list) -> tuple:
    """The stack's depth and the other modules' functions running on it."""
    foreign_running: list[int] = []  # (a loop, not a generator: this runs for many calls)
    for fr in stack:
        f = fr.func
        if f is not None and _origin_of(f.closure) is not None:
            foreign_running.append(id(f.node))
    return len(stack), tuple(foreign_running)


def _stands_for_a_run_here(hit: ForeignEntry, stack: list) -> bool:
    """Whether a run of the call on `stack` would be the run `hit` kept (see the module doc)."""
    if not hit.was_cut and not hit.findings and len(stack) + hit.reach < MAX_DEPTH:
        entered = hit.entered
        for fr in stack:
            f = fr.func
            if f is not None and id(f.node) in entered:
                break
        else:
            return True
    return hit.stack_key == _stack_key(stack)


def call(interp: Any, func: FuncVal, call: Call) -> Value:
    key = observed_call_key(interp, func, call)
    if key is None:
        return interp._call_user(func, call)
    entry_span = _entry_span(interp, call)
    stack = interp.stack
    memo = interp.foreign_memo
    hit: ForeignEntry | None = memo.get(key)
    if hit is not None and (hit.again or hit.clean) \
            and (hit.entry_span == entry_span or (hit.entry_span is not None and not hit.findings)) \
            and interp.steps + hit.steps <= interp._check_at and hit.replays_here(interp) \
            and _stands_for_a_run_here(hit, stack) and hit.stands_for(func, call):
        interp.steps += hit.steps
        return interp.memo_replay(hit, func, call)
    if interp.silent:
        return silent_memo.call(interp, func, call)  # (a silent run is not stored here)
    entry = ForeignEntry(outer_certain=interp.certain and not any(f.maybe_returned for f in stack),
                         ran_certain=interp.certain)
    entry.entry_span = entry_span
    entry.again = hit is not None and not hit.was_cut  # (a cut run may have skipped a first run's work)
    entry.stack_key = _stack_key(stack)
    start = interp.steps
    before = first_run_state(interp)
    result = interp.memo_run(entry, func, call)
    entry.steps = interp.steps - start
    entry.clean = first_run_state(interp) == before
    if not entry.writes_outside and interp.defined.keys().isdisjoint(entry.entered) \
            and (hit is None or hit.was_cut or not entry.was_cut):  # (a cut run keeps no uncut one out)
        memo[key] = entry
    return result


def _entry_span(interp: Any, call: Call) -> Any:
    """The call in the analysed document the callee's findings will sit at (as enter_module
    sets it)."""
    if interp.where is not None:
        return interp.entry_span
    return interp.span(call.node) if call.node is not None else None

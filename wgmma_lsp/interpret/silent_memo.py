"""Calls memoised within silent passes: the runs that only compute state (`interp.quiet()`: the
first pass of a loop of unknown trip count, `interp_loops.loop`, which reaches the joined state
its recorded pass starts from), which the analysis' memos (`memo.py`, `foreign_memo.py`) never
store, since a replay of a silent run elsewhere would skip the records and findings of a real one.

Why: a function analysed with nothing known joins a nest of loops it does not unroll
(`driver._unroll_capped`), and each joined loop runs its body once silently before it runs it
recorded, so the innermost body's calls run silently once per level of the nest, with arguments
that repeat: tokamax's attention SM100 `get_autotuning_configs` called `_get_scratch_types`
silently 29 times with 9 distinct arguments, and `_eval_input_shapes` 7 times with 2, two thirds
of that function's analysis.

An entry is stored from a silent run and replayed only in a silent pass, where nothing is
recorded or reported either way; a replay stands for a run only where nothing could tell them
apart, so the analysis finds, notes and cuts exactly what it did without this memo:

- a call replays from its third equal call on, or from its second when its first run was clean
  (`memo.first_run_state`): the first run may take more steps than later ones (what it
  looked up once is cached), and a replay counts the steps of the run it stands for;
- the steps a replay stands for are counted (every budget runs out at the same step); a replay
  that would reach the next checkpoint (a budget or cancellation check) runs instead;
- what a silent run leaves besides its result is done again: the context added to each function
  it entered (`ctx_entered`, which the hover pass reads) and to the calls being memoised around it,
  the swept values it read (`observe.py`), whether its nest of loops was joined (`unroll_joined`),
  whether it raised on every path;
- the functions a run defined (a nested `def`, a `lambda`: `interp.defined` holds the last one
  made, not the replay's) are noted; a replay is made only once each of them was entered outside a
  silent pass (`interp.entered`), after which nothing reads those values (the driver analyses only
  functions no one entered; the rest of its readers, module-level functions only);
- a run that left anything else is not stored: one that changed older objects
  (`MemoEntry.writes_outside`), held a kernel launch, or added a finding, note, stop, unresolved
  import, sweep or escaped function;
- a replay's result is the replaying call's own objects, as every memo's (`replay_objects.py`);
- the key holds, besides the call's own (`memo.call_key`: the function, its arguments, the running
  kernel's state), each function running with its scope (the recursion guard and the depth limit
  cut calls by them), the path's certainty and the loop-unrolling cap and weight in force
  (`interp_loops._nest_too_big`); nothing is memoised while a test context's hooks dispatch calls
  or a function's returns are logged (`return_log`).
"""

from __future__ import annotations


from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.memo import MemoEntry, first_run_state, observed_call_key, replayed
from wgmma_lsp.interpret.values import FuncVal, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

ENABLED = True  # (benchmarks compare with it off)


class SilentEntry(MemoEntry):
    steps: int = 0
    again: bool = False  # the second run of the call: a replay counts its steps
    clean: bool = False  # a first run that took the steps a second would (foreign_memo.py)
    joined: bool = False  # the run joined a nest of loops the unrolling cap cut (`unroll_joined`)
    defined: set[int]  # the functions (def nodes) the run defined, its replays' included


def note_defined(interp: Any, node: int) -> None:
    """A function (its def node) was defined while `interp.captures` run: noted in the silent
    runs among them."""
    for entry in interp.captures:
        if type(entry) is SilentEntry:
            entry.defined.add(node)


def _applies(interp: Any, func: FuncVal) -> bool:
    """A module-level function (the document's or another of the user's modules') called in a
    silent pass of a document's analysis (not the hover pass, not another module's summary)."""
    return ENABLED and interp.silent and interp.memo_enabled and not interp.hover_only \
        and interp.home is None and func.closure.parent is None \
        and interp.program_hooks is None and interp.return_log is None


def _state(interp: Any) -> tuple:
    """What a run may add to, besides what a replay does again (see the module doc)."""
    return (len(interp.findings), len(interp.notes), len(interp.incomplete), len(interp.unresolved),
            len(interp.sweep_checked), interp.outside_writes, len(interp.escaped),
            len(interp.capped), len(interp.smem_usage), len(interp._records),
            len(getattr(interp, "barrier_uses", ())))


def call(interp: Any, func: FuncVal, call: Call) -> Value:
    """`func(call)` in a silent pass: replayed, or run (and stored when it may be replayed)."""
    if not _applies(interp, func):
        return interp._call_user(func, call)
    key = observed_call_key(interp, func, call)
    if key is None:
        return interp._call_user(func, call)
    running = tuple((id(fr.func.node), id(fr.func.closure)) if fr.func is not None else None
                    for fr in interp.stack)
    key = (key, running, interp.certain, interp.unroll_cap, interp.unroll_weight, id(interp.where))
    memo: dict[Any, SilentEntry] = interp.silent_memo
    hit = memo.get(key)
    if hit is not None and (hit.again or hit.clean) and interp.steps + hit.steps <= interp._check_at \
            and all(node in interp.entered for node in hit.defined) and hit.reads_unchanged(interp) \
            and hit.stands_for(func, call):
        return _replay(interp, hit, func)
    entry = SilentEntry(outer_certain=False)
    entry.defined = set()
    entry.again = hit is not None
    joined_before = interp.unroll_joined
    before = _state(interp)
    first = first_run_state(interp)
    start = interp.steps
    result = interp.memo_run(entry, func, call)
    entry.steps = interp.steps - start
    entry.clean = first_run_state(interp) == first
    entry.joined = interp.unroll_joined and not joined_before
    if not entry.writes_outside and not entry.launches and not entry.findings and _state(interp) == before:
        memo[key] = entry
    return result


def _replay(interp: Any, hit: SilentEntry, func: FuncVal) -> Value:
    """What the silent run `hit` stands for did, done for this call (see the module doc)."""
    interp.steps += hit.steps
    if interp.observing:
        interp.obs.add(hit.observed)  # what the run it stands for looked at
    replayed(interp, hit)
    for outer in interp.captures:  # (a silent run finds nothing: only what it entered, defined)
        outer.entered |= hit.entered
        if type(outer) is SilentEntry:
            outer.defined |= hit.defined
    ctx = interp.ctx  # (a call in a silent pass runs in the context running: `call_context`)
    ctx_entered = interp.ctx_entered
    for node in hit.entered:  # (it holds the function itself: `memo_run` captured it)
        contexts = ctx_entered.get(node)
        if contexts is None:
            contexts = ctx_entered[node] = set()
        contexts.add(ctx)
    if hit.joined:
        interp.unroll_joined = True
    interp.raised_out = hit.raised
    if hit.raised and interp.stack:
        interp.stack[-1].returned = True  # the call raises every time: nothing after it runs
    return hit.result_for_replay()

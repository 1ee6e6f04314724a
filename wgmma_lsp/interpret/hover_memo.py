"""Calls memoised within the hover pass (`driver.hover_pass`), which runs without the analysis'
memo (`memo.py`, `foreign_memo.py`): a replay there would skip the callee's recording of hover
values, and would not spend the steps of the run it stands for.

Why: the hover pass runs a module's autotuning-config provider again in full, and its package's
left-out test cases, with nothing memoised; a provider's loop calls the same helper with the same
arguments again and again (tokamax's attention SM100 `get_autotuning_configs` called
`_eval_input_shapes` 141 times with three distinct arguments, two thirds of the 400,000 steps of
its piece's budget, 1 s of CPU).

A replay stands for a run only where nothing could tell them apart, so the hover pass records,
picks and stops exactly where it did without this memo:

- a call replays only from its third equal call on: the first two run (and record); the first
  run may take more steps than later ones (what it looked up once is cached), and a replay
  counts the steps of the second. Or from its second, when the first run was clean: it changed
  nothing a later equal run's steps depend on (`memo.first_run_state`) and recorded no value
  for code that had none (an equal second run records nothing more: see the last point);
- the steps a replay stands for are counted: every budget (the provider's piece, a test case's)
  runs out at the same step; a replay that would pass the next checkpoint runs instead;
- the key holds, besides the call's own (`memo.call_key`: the function, its arguments, the
  running kernel's state), each function running with its scope (the recursion guard and the
  depth limit cut calls by them) and whether the flags' defaults are flipped;
- what a replay does not do is record hover values for the callee's code: a hover-pass run
  records values only where no context, nor an earlier run of the pass in another context,
  gave the code an informative one (`interp_records._record`), and equal runs record equal
  values: the two runs before it recorded what an equal third one would;
- a run that changed older objects (`MemoEntry.writes_outside`) is not stored;
- a replay's result is the replaying call's own objects, as every memo's (`replay_objects.py`).
"""

from __future__ import annotations


from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.memo import MemoEntry, first_run_state, observed_call_key
from wgmma_lsp.interpret.values import FuncVal, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


class HoverEntry(MemoEntry):
    steps: int = 0
    again: bool = False  # the second run of the call: a replay counts its steps
    clean: bool = False  # a first run that took the steps a second would, recording nothing new


def _first_run_state(interp: Any) -> tuple:
    return (*first_run_state(interp), len(interp._records))


def applies(interp: Any, func: FuncVal) -> bool:
    """A module-level function (the document's or another of the user's modules'), called in
    the hover pass of a document's analysis."""
    return interp.hover_memo is not None and interp.home is None and func.closure.parent is None


def call(interp: Any, func: FuncVal, call: Call) -> Value:
    key = observed_call_key(interp, func, call)
    if key is None or interp.silent:
        return interp._call_user(func, call)
    stack = interp.stack
    running = tuple((id(fr.func.node), id(fr.func.closure)) if fr.func is not None else None for fr in stack)
    key = (key, running, interp.flip_flags)
    memo: dict[Any, HoverEntry] = interp.hover_memo
    hit = memo.get(key)
    if hit is not None and (hit.again or hit.clean) and interp.steps + hit.steps <= interp._check_at \
            and hit.reads_unchanged(interp) and hit.stands_for(func, call):
        interp.steps += hit.steps
        return interp.memo_replay(hit, func, call)
    entry = HoverEntry(outer_certain=interp.certain and not any(f.maybe_returned for f in stack))
    entry.again = hit is not None
    start = interp.steps
    before = _first_run_state(interp)
    result = interp.memo_run(entry, func, call)
    entry.steps = interp.steps - start
    entry.clean = _first_run_state(interp) == before
    if not entry.writes_outside:
        memo[key] = entry
    return result

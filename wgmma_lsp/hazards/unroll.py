"""Loops with Python-int bounds, unrolled in the hazard log: each step's operations at that step's
slots.

A multi-buffered loop picks its slot from the loop index (`slot = i % num_stages`, `lax.rem(i, 2)`).
JAX traces the body once with `i` traced; so does the interpreter, but for a `lax.fori_loop` /
`pl.loop` whose bounds are Python ints (and whose carry cannot hold a Python number the body
indexes with), the index it gets is a `StepInt` (interpret/loop_steps.py): a traced `int32[]` that
also knows its value at each step. An operation of the body whose ref, index or barrier depends on
it keeps them (`Event.per_step`); a `pl.when` on a condition of the steps (`i + 2 < n`) marks
the steps its operations run at (`Event.steps`). When the body has run, `expand` replaces its
operations by those of every step in order, each with the boxes and barrier slot of that step:
the log is then the one of the loop written out by hand. Anything else about the index (a value
the models do not follow) is unknown, as before, and proves nothing.
"""

from __future__ import annotations

from wgmma_lsp.hazards.regions import box_of
from wgmma_lsp.interpret import loop_steps
from wgmma_lsp.interpret.values import RefVal

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

MAX_STEPS = 64  # a loop with more steps is not unrolled (its body is seen once or twice, as before)


def mark(log: Any, ev: Any, sources: tuple) -> None:
    """An operation recorded while `log.unroll`'s body runs: the steps it runs at, and what its
    boxes depend on when that is the loop index."""
    loop, n = log.unroll
    if log.loop_depth == 1:
        ev.data["exact"] = True  # once per step, unrolled: not inside another traced loop
    if log.step_masks:
        ev.steps = tuple(all(m[t] for m in log.step_masks) for t in range(n))
    if loop_steps.mentions(sources, loop):
        ev.per_step = sources


def expand(log: Any, start: int, loop: int, n: int, max_events: int) -> bool:
    """Replace the body's operations (`log.events[start:]`) by those of its n steps. False (and
    the log left as it was) when that would be more than `max_events` operations."""
    body = log.events[start:]
    if start + len(body) * n > max_events:
        for e in body:  # not unrolled: an operation of some steps only may not run
            if e.steps is not None and not all(e.steps):
                e.certain = False
            e.steps = e.per_step = None
        return False
    out = []
    # Which of each operation's sources change with the step (the others are the same at every step)
    moving = {id(e): [loop_steps.mentions(x, loop) for x in e.per_step]
              for e in body if e.per_step is not None}
    fixed: set = set()  # (what at_step found the same at every step)
    for t in range(n):
        memo: dict = {}  # (at_step's answers at this step)
        for e in body:
            if e.steps is not None and not e.steps[t]:
                continue
            c = _step_copy(e)
            if e.per_step is not None:
                ref, index, barrier, gmem = (loop_steps.at_step(x, loop, t, memo=memo, fixed=fixed) if m else x
                                             for x, m in zip(e.per_step, moving[id(e)]))
                if isinstance(ref, RefVal) and c.buffer is not None:
                    c.box = box_of(ref, index)
                if isinstance(barrier, RefVal) and c.barrier is not None:
                    c.slot = box_of(barrier)
                if isinstance(gmem, RefVal) and c.gmem is not None:
                    c.gmem_box = box_of(gmem)
            out.append(c)
    log.events[start:] = out
    return True


def _step_copy(e: Any) -> Any:
    """`dataclasses.replace(e, data=dict(e.data), steps=None, per_step=None)` of an `Event`
    (a plain dataclass: its `__init__` only assigns its fields), without `replace`'s walk of
    the fields and keyword call: one copy per operation per step of every unrolled loop."""
    c = object.__new__(type(e))
    c.__dict__.update(e.__dict__)
    c.data = dict(e.data)
    c.steps = None
    c.per_step = None
    return c

"""The record of a kernel's shared-memory operations, as the interpreter runs its body.

`kernel_enter` opens a log for the kernel `_run_kernel` is about to interpret; the models append
events to the innermost open log (`record`); `finished` hands it over for analysis
(`report.py`); `kernel_pop` closes it. An event knows whether it happens in every execution the
analysis sees (`certain`): not on a path the interpreter is unsure of, not inside a traced branch
or a loop that may not run (`maybe`), not in a pass that only computes joined state.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from dataclasses import dataclass, field

from wgmma_lsp.hazards import unroll, warps
from wgmma_lsp.hazards.regions import Box, box_of
from wgmma_lsp.interpret.values import RefVal, TupleVal, Value
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Iterator


@dataclass
class Event:
    """One operation. `kind`: "load" (copy_gmem_to_smem: an async-proxy write of `buffer`
    arriving on `barrier`), "store" (copy_smem_to_gmem: an async-proxy read of `buffer`), "read"
    / "write" (the thread's loads and stores through an SMEM ref), "wait" / "arrive" (on
    `barrier`), "commit" (commit_smem), "wait_store" (wait_smem_to_gmem(n)), "gmem_read" /
    "gmem_write" (the thread's loads and stores through a GMEM ref: `gmem`, `gmem_box`)."""

    kind: str
    certain: bool
    span: Span | None
    line: int  # 0-based line JAX's source info names for it
    buffer: RefVal | None = None  # the allocation (root ref) of an SMEM access
    box: Box | None = None
    barrier: RefVal | None = None  # the barrier allocation (root ref)
    slot: Box | None = None  # which barriers of a barrier array (None: unknown)
    n: int | None = None  # wait_smem_to_gmem's n (None: unknown)
    in_loop: bool = False  # inside a traced loop (its body is seen once or twice, not per step)
    thread: int | None = None  # run by this thread only (`pl.when(lax.axis_index(t) == k)`); None: all
    gmem: RefVal | None = None  # the GMEM side: a copy out's destination, a copy in's source
    gmem_box: Box | None = None
    func: int | None = None  # id() of the enclosing `def` node (fixes edit one function)
    data: dict[str, Any] = field(default_factory=dict)  # what fixes need (spans, spellings)
    # In the body of a loop being unrolled (hazards/unroll.py): the steps it runs at (None: all),
    # and the (ref, index, barrier, gmem) its boxes are computed from at each step.
    steps: tuple[bool, ...] | None = None
    per_step: tuple | None = None

    def same_buffer(self, other: "Event") -> bool:
        return self.buffer is not None and self.buffer is other.buffer


@dataclass
class KernelLog:
    """The events of one kernel body, for the race analysis."""
    events: list[Event] = field(default_factory=list)
    maybe_depth: int = 0  # inside traced branches / loops that may not run
    loop_depth: int = 0  # inside traced loops
    opaque: str = ""  # why the log cannot be trusted (a pipeline, a ref passed to an unknown call)
    memo_saved: bool = False
    # One thread runs the body (no `num_threads`, no warp_map): program order is its time, and a
    # wait sees only the arrivals before it. Otherwise another thread may arrive first.
    single_thread: bool = False
    ends_kernel: bool = False  # the log runs to the kernel's end (`plgpu.kernel`)
    body_end: tuple[int, str] | None = None  # (0-based line after the body, its indentation)
    body_func: int = 0  # id() of the body's `def` node
    # How many threads run the body of one block (proven: `num_threads=n`; 1 otherwise), how many
    # instances (threads of all blocks: grid x cluster x threads) write GMEM, and the allocation
    # spans of the SMEM the threads share (`plgpu.kernel` scratch with a `thread_name`).
    threads: int = 1
    instances: int = 1
    shared: set = field(default_factory=set)
    thread_name: str | None = None  # the kernel's thread axis
    thread_role: int | None = None  # inside `pl.when(lax.axis_index(thread_name) == k)`: k
    axis_values: dict[int, tuple[Value, str]] = field(default_factory=dict)  # id -> (lax.axis_index(name), name)
    # id of `<an axis_values value> == k` -> (that comparison's value, the axis name, k)
    axis_compares: dict[int, tuple[Value, str, int]] = field(default_factory=dict)
    unroll: tuple[int, int] | None = None  # the loop being unrolled: (its StepInt's loop, steps)
    step_masks: list[tuple[bool, ...]] = field(default_factory=list)  # `pl.when` on a step condition
    scratch: set = field(default_factory=set)  # the allocation spans of the kernel's scratch
    # `pl.core_map(plgpu.WarpMesh(...))` (hazards/warps.py): the log's events [start, end) are the
    # warps' (end None: the body is running), and what the log said before it.
    warps: tuple[int, int | None, tuple] | None = None
    # `interp.report_serial` when the body started: a run JAX's error ended after it (a certain
    # trace-time error in the body, interpret/followon.py) means the kernel never runs.
    serial: int = 0


MAX_EVENTS = 20_000  # a kernel body with more operations than this is not analysed

#: Off: no kernel log is opened (benchmarks/bench_hazards.py measures what the analysis adds).
ENABLED = True


def _stack(interp) -> list[KernelLog]:
    stack = getattr(interp, "_hazard_logs", None)
    if stack is None:
        stack = interp._hazard_logs = []
    return stack


def current(interp) -> KernelLog | None:
    stack = getattr(interp, "_hazard_logs", None)
    return stack[-1] if stack else None


def kernel_enter(interp, single_thread: bool = False, ends_kernel: bool = False,
                 body_end: tuple[int, str] | None = None) -> None:
    """A kernel body is about to run. Calls inside it are not memoised while it runs: a call
    replayed from the memo would leave its operations out of the log (a barrier_wait in a helper
    called twice), and a log with a hole could prove a race that is not there."""
    if not ENABLED:
        return
    log = KernelLog(memo_saved=interp.memo_enabled, single_thread=single_thread, ends_kernel=ends_kernel,
                    body_end=body_end, serial=interp.report_serial)
    interp.memo_enabled = False
    _stack(interp).append(log)


def kernel_pop(interp) -> None:
    stack = _stack(interp)
    if stack and ENABLED:
        log = stack.pop()
        interp.memo_enabled = log.memo_saved


def finished(interp) -> KernelLog | None:
    """The body ran: its log, if it is one to analyse (complete, not too long, in a pass that
    reports, of a kernel that runs: JAX raised no error for sure while tracing it — a race is a
    run-time hazard, and neither the GPU nor interpret mode's race detector runs a kernel whose
    tracing failed)."""
    log = current(interp)
    if log is None or log.opaque or not log.events or len(log.events) > MAX_EVENTS \
            or interp.hover_only or interp.silent:
        return None
    if any(at > log.serial for at in interp.ended.values()):
        return None
    return log


def certain_here(interp) -> bool:
    log = current(interp)
    return bool(interp.certain and not interp.silent and (log is None or log.maybe_depth == 0)
                and not any(f.maybe_returned for f in interp.stack)
                and not any(lp.maybe_stopped for lp in interp.loops if lp is not None))


def _enclosing_def(interp) -> int | None:
    for f in reversed(interp.stack):
        if f.func is not None:
            return id(f.func.node)
    return None


def record(interp, kind: str, span: Span | None, line: int, ref: Value | None = None,
           index: Value | None = None, barrier: Value | None = None, n: int | None = None,
           gmem: Value | None = None, **data: Any) -> None:
    """Append one operation to the open kernel log (nothing when no kernel is being run)."""
    log = current(interp)
    if log is None or log.opaque:
        return
    if len(log.events) > MAX_EVENTS:
        return
    ev = Event(kind, certain_here(interp), span, line, n=n, func=_enclosing_def(interp), data=data,
               thread=log.thread_role, in_loop=log.loop_depth > 0)
    if isinstance(ref, RefVal):
        ev.buffer = ref.root()
        ev.box = box_of(ref, index)
    elif ref is not None:
        ev.certain = False  # not a ref we know: it proves nothing (a sync still counts)
    if isinstance(gmem, RefVal):
        ev.gmem = gmem.root()
        ev.gmem_box = box_of(gmem)
    if isinstance(barrier, RefVal):
        ev.barrier = barrier.root()
        ev.slot = box_of(barrier)
        ev.data["num_arrivals"] = getattr(interp, "_hazard_barrier_arrivals", {}).get(ev.barrier.spec_span)
    elif barrier is not None and kind in ("wait", "arrive"):
        ev.barrier = None  # an unknown barrier: a wait on it may order anything
    if log.unroll is not None:
        unroll.mark(log, ev, (ref, index, barrier, gmem))
    if log.warps is not None and log.warps[1] is not None:
        warps.outside(log)  # the warpgroup runs an operation after the warps: not followed
    log.events.append(ev)


def make_opaque(interp, why: str) -> None:
    """Something ran that the log does not see into (a pipeline's own copies and barriers):
    the kernel's hazards are not analysed."""
    log = current(interp)
    if log is not None and not log.opaque:
        log.opaque = why


def unfollowed_call(interp, args: list[Value]) -> None:
    """A call the interpreter does not follow got a ref (it may wait, arrive or copy): the
    kernel's log has a hole, and its hazards are not analysed."""
    log = current(interp)
    if log is None or log.opaque:
        return
    todo = list(args)
    while todo:
        v = todo.pop()
        if isinstance(v, RefVal):
            log.opaque = "a ref passed to a call the analysis does not follow"
            return
        if isinstance(v, TupleVal):
            todo.extend(v.items)


@contextmanager
def maybe(interp, flag: bool = True) -> Iterator[None]:
    """A region JAX traces but that may not run at run time (a `pl.when` on a traced condition,
    a branch of `lax.cond`, the body of a loop whose trip count may be 0)."""
    log = current(interp) if flag else None
    if log is not None:
        log.maybe_depth += 1
    try:
        yield
    finally:
        if log is not None:
            log.maybe_depth -= 1


def call_func_prefix(node: ast.AST | None) -> str | None:
    """`plgpu.` for a call spelled `plgpu.copy_gmem_to_smem(...)`: how the fix spells its own
    call; None when the function is called by a bare name."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return ast.unparse(node.func.value) + "."
    return None

"""Threads with different roles touching the same SMEM (warp specialisation), ordered by vector
clocks the way JAX's GPU interpret mode orders them (jax/_src/pallas/mosaic_gpu/interpret/:
`shared_memory.py: Barrier.arrive / wait`, `gpu_callbacks.py: _get / _swap`).

`plgpu.kernel(body, num_threads=n, thread_name="wg", scratch_types=[...])` runs `body` once per
thread; the scratch is shared by the block's threads. An operation under `pl.when(wg == k)` is
thread k's; any other runs in every thread. Each thread's program is the log in order, keeping its
own operations and those of every thread. Its clock counts, per thread, how many of that thread's
operations it knows to have happened: its own up to the current one, and what it learnt by
waiting. An arrival (`barrier_arrive`, or the completion of a `copy_gmem_to_smem` it issued)
carries the arriving thread's clock; a wait takes every arrival on the same barrier (a slot that
may be the same), wherever it is in the log and in whichever phase: more ordering than any
execution has, never less, iterated until the clocks settle.

Two accesses of two different threads to overlapping parts of a shared buffer, at least one a
write, both happening for sure, with neither known to the other, race in every execution. Pairs
where both run in every thread are WG205's (every thread writes the same part). A wait or arrival
on a barrier the log does not know silences the analysis (it could order anything); other
synchronisation (`semaphore_wait`, `barrier_arrive_and_wait`) hands a ref to a call the log does
not follow, and the kernel's log is opaque (`hazards.log.unfollowed_call`).
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.hazards.analysis import Hazard, unknown_sync
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import may_overlap, overlap

_MAX_THREADS = 8  # more threads than this: not analysed (the pairs grow as their square)
_MAX_PASSES = 6
_MAX_ACCESSES = 400  # role accesses to shared SMEM compared pairwise


@dataclass(frozen=True)
class Clocked:
    """One thread's view of the log: its program (log indices, in order) and, for each of its
    operations, its clock just after it (per thread, how many of its operations are known)."""

    program: list[int]
    clocks: list[tuple[int, ...]]
    position: dict[int, int]  # log index -> position in the program


def _run(events: list[Event], threads: int, before: dict[int, list[tuple]]) -> tuple[list[Clocked], dict[int, list[tuple]]]:
    out: list[Clocked] = []
    arrivals: dict[int, list[tuple]] = {}  # barrier -> [(slot, clock of the arrival)]
    for t in range(threads):
        program = [i for i, e in enumerate(events) if e.thread is None or e.thread == t]
        clock = [0] * threads
        clocks: list[tuple[int, ...]] = []
        for pos, i in enumerate(program):
            ev = events[i]
            clock[t] = pos + 1
            if ev.kind == "wait" and ev.barrier is not None:
                for slot, got in before.get(id(ev.barrier), []):
                    if may_overlap(slot, ev.slot):
                        clock = [max(a, b) for a, b in zip(clock, got)]
                clock[t] = pos + 1
            now = tuple(clock)
            if ev.kind in ("arrive", "load") and ev.barrier is not None:
                arrivals.setdefault(id(ev.barrier), []).append((ev.slot, now))
            clocks.append(now)
        out.append(Clocked(program, clocks, {i: p for p, i in enumerate(program)}))
    return out, arrivals


def clocked(events: list[Event], threads: int) -> list[Clocked] | None:
    """Every thread's clocks, settled; None when they do not settle."""
    before: dict[int, list[tuple]] = {}
    for _ in range(_MAX_PASSES):
        views, arrivals = _run(events, threads, before)
        if arrivals == before:
            return views
        before = arrivals
    return None


def knows(views: list[Clocked], p: int, i: int, q: int, j: int) -> bool:
    """Does log event j, as thread q runs it, know that event i of thread p happened?"""
    return views[q].clocks[views[q].position[j]][p] > views[p].position[i]


def cross_role(events: list[Event], threads: int, shared: set) -> tuple[list[Hazard], list[Clocked] | None]:
    """WG215: the first access of each racing pair (in log order) as `other`, the second as
    `access`; the thread clocks, for the fix (which wait could order them)."""
    if not 1 < threads <= _MAX_THREADS or not shared:
        return [], None
    if unknown_sync(events):
        return [], None
    accesses = [i for i, e in enumerate(events) if e.kind in ("read", "write") and e.certain
                and e.buffer is not None and e.box is not None and e.buffer.origin in shared]
    if not any(events[i].thread is not None for i in accesses) or len(accesses) > _MAX_ACCESSES:
        return [], None
    views = clocked(events, threads)
    if views is None:
        return [], None
    out: list[Hazard] = []
    racing: set[int] = set()
    for n, j in enumerate(accesses):
        b = events[j]
        for i in accesses[:n]:
            a = events[i]
            if a.thread is None and b.thread is None or "write" not in (a.kind, b.kind) \
                    or not a.same_buffer(b) or not overlap(a.box, b.box) or j in racing:
                continue
            pair = _threads_of(a, b, threads)
            if pair is not None and not knows(views, pair[0], i, pair[1], j) \
                    and not knows(views, pair[1], j, pair[0], i):
                out.append(Hazard("WG215", j, i, newer=pair[1], waits=(pair[0],)))
                racing.add(j)
    return out, views


def _threads_of(a: Event, b: Event, threads: int) -> tuple[int, int] | None:
    """Two different threads running a and b (one of them may run in every thread)."""
    if a.thread is not None and b.thread is not None:
        return (a.thread, b.thread) if a.thread != b.thread else None
    if a.thread is not None:
        return a.thread, next(t for t in range(threads) if t != a.thread)
    assert b.thread is not None
    return next(t for t in range(threads) if t != b.thread), b.thread

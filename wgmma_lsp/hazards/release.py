"""Producer/consumer threads: a slot refilled by the producer while the consumer may still read it.

Warp specialisation (`plgpu.kernel(num_threads=2, thread_name=...)`, `pl.when(wg == k)`): the
producer thread copies into a slot (`copy_gmem_to_smem`, arriving on the slot's "full" barrier),
the consumer waits on that barrier, uses the slot, and arrives on the slot's "empty" (release)
barrier, which the producer waits on before it refills the slot. `unreleased_refills` finds the
refill with no such wait: a certain TMA load L by thread P over SMEM that thread C (≠ P) reads or
writes at R, where

- R uses a fill C waited for (C waits, for sure, on L's barrier slot before R) but not L itself:
  every arrival on that barrier slot is a certain copy of P's, at that slot, and L is one of them
  whose phase C has not waited for before R (C waits at most `k // num_arrivals` times on it
  before R, L being its k-th arrival) — for L's completion to reach C before R, the barrier
  would have to complete a phase C never observed (JAX's interpret mode raises; the GPU's
  parity wait returns on the wrong phase);
- P has no wait after L on L's barrier (through which its completion could reach other threads);
- R is not ordered before L: no wait of P before L (certain or not) is on a barrier slot that an
  arrival of C after R (a `barrier_arrive`, or a copy C issues), or of any other thread, may
  reach; a wait on an unknown barrier anywhere silences the kernel.

So in every execution the copy overwrites the slot unordered with the consumer's use (a data
race jax's detector reports), or a barrier phase is lost. Loops count only unrolled
(hazards/unroll.py): an operation of a loop seen once for many steps proves nothing here.
"""

from __future__ import annotations

from wgmma_lsp.hazards.analysis import Hazard, same_slot
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import may_overlap, overlap

CODE = "WG210"


def _exact(e: Event) -> bool:
    return not e.in_loop or bool(e.data.get("exact"))


def _mine(e: Event, thread: int) -> bool:
    return e.thread is None or e.thread == thread


MAX_EVENTS = 5_000  # a longer log is not searched for these (quadratic) pairs


def unreleased_refills(events: list[Event], threads: int) -> list[Hazard]:
    if threads < 2 or len(events) > MAX_EVENTS or any(e.kind == "wait" and e.barrier is None for e in events):
        return []
    loads = [i for i, e in enumerate(events) if e.kind == "load" and e.certain and e.thread is not None
             and e.barrier is not None and e.slot is not None and e.box is not None and _exact(e)]
    if not loads:
        return []
    uses = [i for i, e in enumerate(events) if e.kind in ("read", "write") and e.certain and e.thread is not None
            and e.buffer is not None and e.box is not None and _exact(e)]
    waits = [i for i, e in enumerate(events) if e.kind == "wait"]
    by_barrier: dict[int, list[int]] = {}  # barrier -> its arrivals (copies in, barrier_arrive), in order
    for j, e in enumerate(events):
        if e.kind in ("load", "arrive") and e.barrier is not None:
            by_barrier.setdefault(id(e.barrier), []).append(j)
    out: list[Hazard] = []
    for li in loads:
        load = events[li]
        p = load.thread
        n = load.data.get("num_arrivals")
        if not isinstance(n, int) or n < 1:
            continue
        arrivals = [j for j in by_barrier.get(id(load.barrier), []) if same_slot(events[j], load)]
        if any(not (events[j].kind == "load" and events[j].certain and events[j].thread == p and _exact(events[j])
                    and events[j].slot == load.slot) for j in arrivals):
            continue
        k = sum(1 for j in arrivals if j < li)
        if any(w > li and _mine(events[w], p) for w in waits if same_slot(events[w], load)):
            continue
        p_waits = [events[w] for w in waits if w < li and _mine(events[w], p)]
        on_load = [w for w in waits if same_slot(events[w], load)]
        for ri in uses:
            use = events[ri]
            if use.thread == p or not use.same_buffer(load) or not overlap(use.box, load.box):
                continue
            c = use.thread
            before = [events[w] for w in on_load if w < ri and _mine(events[w], c)]
            if not any(w.certain and w.slot == load.slot for w in before) or len(before) > k // n \
                    or not all(_exact(w) for w in before):
                continue
            if any(_may_carry(w, ri, p, c, events, by_barrier) for w in p_waits):
                continue
            out.append(Hazard(CODE, li, ri))
            break
    return out


def _may_carry(wait: Event, ri: int, p: int, c: int, events: list[Event],
               by_barrier: dict[int, list[int]]) -> bool:
    """May the producer's `wait` observe an arrival made after the consumer's access `ri`?"""
    for j in by_barrier.get(id(wait.barrier), []):
        a = events[j]
        if not may_overlap(a.slot, wait.slot):
            continue
        if a.thread == p:
            continue  # its own arrivals carry what it knew then: its own earlier waits, checked too
        if a.thread != c or j > ri:
            return True
    return False


def release_arrive(events: list[Event], h: Hazard) -> Event | None:
    """The consumer's first certain `barrier_arrive` after its access, on another barrier at the
    same slot as the copy's: the release barrier the producer should wait on."""
    load, use = events[h.access], events[h.other]
    for e in events[h.other + 1:]:
        if e.kind == "arrive" and e.thread == use.thread and e.certain and e.barrier is not None \
                and e.barrier is not load.barrier and e.slot == load.slot:
            return e
    return None

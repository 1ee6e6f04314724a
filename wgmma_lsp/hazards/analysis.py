"""Happens-before over a kernel's log: which accesses race in every execution the log shows.

The order is the one JAX's GPU interpret mode gives (jax/_src/pallas/mosaic_gpu/interpret/:
`gpu_callbacks.py`, `shared_memory.py`), computed with sets instead of vector clocks:

- A TMA load (`copy_gmem_to_smem`) writes its SMEM destination asynchronously; it is complete
  for a thread once the thread waits on the barrier it arrives on. The arrival carries what its
  issuer knew when it issued it (JAX: the copy's clock is the thread's), so knowledge passes on
  through chains of copies, waits and `barrier_arrive`s. A barrier's clock in JAX is the join of
  every arrival so far; here a wait takes what every arrival before it on that barrier (slot)
  carries — in a kernel of several threads, also the arrivals later in the log (another thread
  may arrive first), iterated to a fixpoint: more ordering than any execution has, never less.
- A TMA store (`copy_smem_to_gmem`) reads its SMEM source asynchronously until a
  `wait_smem_to_gmem(n)` leaves at most `n` newer stores in flight (jax 0.12: `shared_memory.py:
  wait_smem_to_gmem`; each copy is its own bulk group).
- The thread's accesses to SMEM are ordered before the TMA engine's (the async proxy's) only by
  a `commit_smem()` in between (jax 0.12: `GpuClockBundle.commit_smem`): a copy out of what the
  thread wrote, a copy in over what it read or wrote.
- When the kernel ends, no copy out may still be reading its SMEM (jax 0.12:
  `GPUSharedMemory.kernel_thread_finished`).

An access races when it conflicts with a certain operation it is not ordered with, both are
certain, and their boxes are known to overlap. Waits, arrivals and commits count wherever they
may happen; an unknown barrier or count orders everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import may_overlap, overlap

_MAX_PASSES = 4


@dataclass(frozen=True)
class Hazard:
    """A race the analysis found."""
    code: str  # "WG200" read before the TMA load is waited; "WG201" write during a TMA store;
    # "WG202" TMA store of uncommitted writes; "WG203" TMA store in flight when the kernel ends;
    # "WG204" TMA load over SMEM the thread accessed since the last commit; "WG205" every thread
    # of a block writes the same SMEM; "WG206" every thread / block copies out to the same GMEM;
    # "WG207" GMEM read or written while a copy out may still be writing it; "WG208" a second
    # phase completes before the first is observed; "WG209" a wait whose phase never completes
    access: int  # index of the racing access in the log
    other: int  # index of the operation it races with
    newer: int = 0  # WG201: certain stores issued after `other` (the count a fix may leave)
    waits: tuple[int, ...] = ()  # WG200: waits on other barriers (or slots) before the access


def copies_made(ev: Event, threads: int, instances: int) -> int:
    """How many instances of the body make this operation: all of them, or, for one thread's
    (`pl.when` on the thread index), that thread of every block."""
    return instances if ev.thread is None else instances // max(1, threads)


def thread_programs(events: list[Event]) -> list[tuple[int | None, list[int]]]:
    """Each role's program (log indices, in order): its own operations and those of no role,
    which every thread runs; one program (role None) when no operation has a role."""
    roles = sorted({e.thread for e in events if e.thread is not None}) or [None]
    return [(t, [i for i, e in enumerate(events) if e.thread is None or e.thread == t]) for t in roles]


def _conflict(a: Event, b: Event) -> bool:
    return a.certain and b.certain and a.same_buffer(b) and overlap(a.box, b.box)


def same_slot(a: Event, b: Event) -> bool:
    """On the same barrier, at a slot that may be the same."""
    return a.barrier is b.barrier and may_overlap(a.slot, b.slot)


def unknown_sync(events: list[Event]) -> bool:
    """A wait or arrival on a barrier the log does not know (it could order anything)."""
    return any(e.kind in ("wait", "arrive") and e.barrier is None for e in events)


class _Join:
    """What the arrivals a wait at one barrier slot sees carry: the first `taken` arrivals of this
    pass (and the previous pass's) joined in `knowledge`; `in_known`: the pass's `known` holds it."""
    __slots__ = ("in_known", "knowledge", "taken")

    def __init__(self) -> None:
        self.taken = 0
        self.knowledge: set[int] = set()
        self.in_known = False


class _Pass:
    def __init__(self, events: list[Event], before: dict[int, list[tuple[int, frozenset[int]]]],
                 ends_kernel: bool = False):
        self.events = events
        self.ends_kernel = ends_kernel
        self.before = before  # barrier-arrival knowledge from the previous pass
        self.arrivals: dict[int, list[tuple[int, frozenset[int]]]] = {}
        self.hazards: list[Hazard] = []
        # (barrier, slot of a wait) -> what the arrivals a wait there sees carry, joined so far
        self._joined: dict[tuple[int, object], _Join] = {}

    def _waits_before(self, i: int, thread: int | None) -> bool:
        """Does the thread wait on anything before event i (in its own program)?"""
        return any(e.kind == "wait" and (e.thread is None or e.thread == thread) for e in self.events[:i])

    def _unordered(self, a: int, b: int, forward_known: bool = False) -> bool:
        """Events of two different threads (`pl.when` on the thread index) can be ordered only
        through a wait: with no wait before either one in its thread, they are not. (WG200: the
        load's completion is known not to precede the read by the knowledge sets; the read could
        still precede the load only through a wait of the loading thread.)"""
        ea, eb = self.events[a], self.events[b]
        if ea.thread is None or eb.thread is None or ea.thread == eb.thread:
            return True
        if forward_known:
            return not self._waits_before(b, eb.thread)
        return not self._waits_before(a, ea.thread) and not self._waits_before(b, eb.thread)

    def run(self) -> None:
        known: set[int] = set()
        loads: list[int] = []
        stores: list[int] = []  # in flight, oldest first
        writing: list[int] = []  # copies out whose GMEM writes may be in flight, oldest first
        uncommitted: list[int] = []  # thread reads and writes since the last commit_smem
        all_loads = [i for i, e in enumerate(self.events) if e.kind == "load"]
        for i, ev in enumerate(self.events):
            k = ev.kind
            if k in ("read", "write", "store"):
                self._before_wait(i, ev, loads, known)
            if k in ("write", "load"):
                self._during_store(i, ev, stores)
            if k in ("load", "gmem_read", "gmem_write") and ev.gmem is not None:
                self._gmem_during_store(i, ev, writing)
            if k == "load":
                for w in uncommitted:
                    if _conflict(ev, self.events[w]) and self._unordered(i, w):
                        self.hazards.append(Hazard("WG204", i, w))
                        break
                loads.append(i)
                self._arrive(i, ev, frozenset(known | {i}))
            elif k == "arrive":
                self._arrive(i, ev, frozenset(known))
            elif k == "wait":
                if ev.barrier is None:
                    known.update(all_loads)
                else:
                    self._take_arrivals(ev, known)
            elif k in ("read", "write"):
                uncommitted.append(i)
            elif k == "commit":
                uncommitted.clear()
            elif k == "store":
                for w in uncommitted:
                    if self.events[w].kind == "write" and _conflict(ev, self.events[w]) and self._unordered(i, w):
                        self.hazards.append(Hazard("WG202", i, w))
                        break
                stores.append(i)
                writing.append(i)
            elif k == "wait_store":
                n = ev.n if ev.n is not None and ev.n >= 0 else 0
                del stores[:max(0, len(stores) - n)]
                if not ev.data.get("read_only"):
                    del writing[:max(0, len(writing) - n)]
        # The kernel ends: its SMEM goes away while a copy out still reads it (jax 0.12's
        # interpreter raises in `kernel_thread_finished`).
        left = [s for s in stores if self.events[s].certain]
        if self.ends_kernel and left:
            self.hazards.append(Hazard("WG203", left[-1], left[-1], newer=len(left)))

    def _take_arrivals(self, ev: Event, known: set[int]) -> None:
        """`known` joined with what every arrival on the wait's barrier, at a slot that may be its
        own, carries: this pass's arrivals so far and the previous pass's. Only the arrivals made
        since the last wait at that slot are joined (the join only grows, as `known` does)."""
        barrier = id(ev.barrier)
        join = self._joined.get((barrier, ev.slot))
        if join is None:
            join = self._joined[(barrier, ev.slot)] = _Join()
            for key, got in self.before.get(barrier, []):
                if self.events[key].barrier is ev.barrier and may_overlap(self.events[key].slot, ev.slot):
                    join.knowledge |= got
        arrivals = self.arrivals.get(barrier, [])
        for key, got in arrivals[join.taken:]:
            if self.events[key].barrier is ev.barrier and may_overlap(self.events[key].slot, ev.slot) \
                    and not got <= join.knowledge:
                join.knowledge |= got
                join.in_known = False
        join.taken = len(arrivals)
        if not join.in_known:
            known.update(join.knowledge)
            join.in_known = True

    def _arrive(self, i: int, ev: Event, knowledge: frozenset[int]) -> None:
        if ev.barrier is not None:
            self.arrivals.setdefault(id(ev.barrier), []).append((i, knowledge))

    def _before_wait(self, i: int, ev: Event, loads: list[int], known: set[int]) -> None:
        for j in loads:
            if j not in known and _conflict(ev, self.events[j]) and self._unordered(i, j, forward_known=True):
                load = self.events[j]
                waits = tuple(w for w in range(j + 1, i) if self.events[w].kind == "wait"
                              and self.events[w].certain and not same_slot(self.events[w], load))
                self.hazards.append(Hazard("WG200", i, j, waits=waits))
                return

    def _gmem_during_store(self, i: int, ev: Event, writing: list[int]) -> None:
        for pos, s in enumerate(writing):
            st = self.events[s]
            if ev.certain and st.certain and st.gmem is not None and st.gmem is ev.gmem \
                    and overlap(ev.gmem_box, st.gmem_box) \
                    and self._unordered(i, s):
                newer = sum(1 for t in writing[pos + 1:] if self.events[t].certain)
                self.hazards.append(Hazard("WG207", i, s, newer=newer))
                return

    def _during_store(self, i: int, ev: Event, stores: list[int]) -> None:
        for pos, s in enumerate(stores):
            if _conflict(ev, self.events[s]) and self._unordered(i, s):
                newer = sum(1 for t in stores[pos + 1:] if self.events[t].certain)
                self.hazards.append(Hazard("WG201", i, s, newer=newer))
                return


def same_for_all(events: list[Event], threads: int, instances: int, shared: set) -> list[Hazard]:
    """Writes every instance of the body makes to the same place (a box that does not depend on
    the thread or block index is the same box for all of them): nothing can order two instances
    of one statement — each would have to wait for the other's later arrival."""
    out: list[Hazard] = []
    for i, ev in enumerate(events):
        if not ev.certain:
            continue
        many = copies_made(ev, threads, instances)
        if ev.kind == "write" and threads > 1 and ev.thread is None and ev.buffer is not None \
                and ev.box is not None and ev.buffer.origin in shared:
            out.append(Hazard("WG205", i, i, newer=threads))
        elif ev.kind == "store" and many > 1 and ev.gmem is not None and ev.gmem_box is not None:
            out.append(Hazard("WG206", i, i, newer=many))
    return out


def phases(events: list[Event], single_thread: bool) -> list[Hazard]:
    """Barrier phases of a one-thread kernel, counted: a wait whose phase never gets its
    `num_arrivals` arrivals (WG209: it never returns), an arrival that completes a second phase
    before the thread waited for the first (WG208: that phase is never observed). Counted only for
    a barrier whose every arrival and wait is certain, outside traced loops, at a known slot, with
    a known `num_arrivals`, in a log with no wait or arrival on an unknown barrier."""
    if not single_thread or unknown_sync(events):
        return []
    by_barrier: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        if e.kind in ("load", "arrive", "wait") and e.barrier is not None:
            by_barrier.setdefault(id(e.barrier), []).append(i)
    out: list[Hazard] = []
    for idx in by_barrier.values():
        evs = [events[i] for i in idx]
        n = evs[0].data.get("num_arrivals")
        if not isinstance(n, int) or n < 1 or any(not e.certain or e.in_loop or e.slot is None
                                                  or e.data.get("num_arrivals") != n for e in evs):
            continue
        counts: dict[tuple, list[int]] = {}  # slot -> [arrivals, waits]
        for i in idx:
            e = events[i]
            a_w = counts.setdefault(e.slot, [0, 0])  # type: ignore[arg-type]
            if e.kind == "wait":
                if a_w[0] < (a_w[1] + 1) * n:
                    out.append(Hazard("WG209", i, i, newer=a_w[0] - a_w[1] * n, waits=(n, a_w[1])))
                    break
                a_w[1] += 1
            else:
                a_w[0] += 1
                if a_w[0] >= (a_w[1] + 2) * n:
                    out.append(Hazard("WG208", i, i, newer=n, waits=(n, a_w[1])))
                    break
    return out


def analyse(events: list[Event], single_thread: bool = False, ends_kernel: bool = False) -> list[Hazard]:
    """The hazards of one kernel's log (none when the passes do not settle). With one thread, a
    wait sees the arrivals before it only: one pass. `ends_kernel`: the log runs to the end of
    the kernel (a `plgpu.kernel` body), where no copy out may still be reading."""
    before: dict[int, list[tuple[int, frozenset[int]]]] = {}
    if single_thread:
        p = _Pass(events, before, ends_kernel)
        p.run()
        return p.hazards
    for _ in range(_MAX_PASSES):
        p = _Pass(events, before, ends_kernel)
        p.run()
        if p.arrivals == before:
            return p.hazards
        before = p.arrivals
    return []

"""Two copies out (`copy_smem_to_gmem`) writing overlapping GMEM with nothing ordering their writes.

A copy out writes its GMEM destination asynchronously, until a `wait_smem_to_gmem(n)` of the
thread that issued it (not `wait_read_only`) leaves it out of the `n` newest (jax 0.12:
`shared_memory.py: GPUSharedMemory.wait_smem_to_gmem` joins the copy's write clock into the
thread's; the next copy's write carries it). A second copy issued before that writes the same
elements unordered with the first (`gpu_callbacks.py: AsyncCopySmemToGmemTask.post_read`, a
`check_write` of the destination): which value GMEM keeps is not defined.

Same thread: the copies in flight are tracked in program order, a wait of unknown `n` retires them
all. Two threads (`pl.when` on the thread index): the later copy races when neither copy's thread
knows, by the thread clocks of `hazards/roles.py`, that the other copy was even issued (knowing
the issue is less than knowing the completion: never a claim too many). Copies every thread or
block makes to the same place are WG206's.
"""

from __future__ import annotations

from wgmma_lsp.hazards.analysis import (
    Hazard,
    copies_made,
    thread_programs,
    unknown_sync,
)
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import overlap
from wgmma_lsp.hazards.roles import Clocked, clocked, knows

CODE = "WG216"
_MAX_STORES = 400


def overlapping_copies_out(events: list[Event], threads: int, instances: int,
                           views: list[Clocked] | None = None) -> list[Hazard]:
    stores = [i for i, e in enumerate(events) if e.kind == "store"]
    if len(stores) < 2 or len(stores) > _MAX_STORES:
        return []
    out: list[Hazard] = []
    out += _same_thread(events, threads, instances)
    if threads > 1 and any(events[i].thread is not None for i in stores):
        out += _two_threads(events, stores, threads, instances, views)
    return out


def _claimable(a: Event, b: Event, threads: int, instances: int) -> bool:
    return a.certain and b.certain and a.gmem is not None and a.gmem is b.gmem \
        and overlap(a.gmem_box, b.gmem_box) and copies_made(b, threads, instances) <= 1 \
        and copies_made(a, threads, instances) <= 1  # more than one instance: WG206's


def _same_thread(events: list[Event], threads: int, instances: int) -> list[Hazard]:
    """Per thread (an operation of no role is every thread's): the copies whose writes may still
    be in flight when the next one is issued."""
    out: list[Hazard] = []
    reported: set[int] = set()
    for _, program in thread_programs(events):
        writing: list[int] = []
        for i in program:
            ev = events[i]
            if ev.kind == "wait_store":
                if not ev.data.get("read_only"):
                    n = ev.n if ev.n is not None and ev.n >= 0 else 0
                    del writing[:max(0, len(writing) - n)]
            elif ev.kind == "store":
                for pos, s in enumerate(writing):
                    if i not in reported and _claimable(events[s], ev, threads, instances):
                        newer = sum(1 for x in writing[pos + 1:] if events[x].certain)
                        out.append(Hazard(CODE, i, s, newer=newer))
                        reported.add(i)
                        break
                writing.append(i)
    return out


def _two_threads(events: list[Event], stores: list[int], threads: int, instances: int,
                 views: list[Clocked] | None) -> list[Hazard]:
    if unknown_sync(events):
        return []
    views = views if views is not None else clocked(events, threads)
    if views is None:
        return []
    out: list[Hazard] = []
    for n, j in enumerate(stores):
        b = events[j]
        for i in stores[:n]:
            a = events[i]
            if a.thread is None or b.thread is None or a.thread == b.thread \
                    or not _claimable(a, b, threads, instances):
                continue
            if not knows(views, a.thread, i, b.thread, j) and not knows(views, b.thread, j, a.thread, i):
                out.append(Hazard(CODE, j, i, newer=-1))  # no wait of this thread orders them
                break
    return out

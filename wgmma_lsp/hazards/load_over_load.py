"""Two TMA loads (`copy_gmem_to_smem`) into overlapping SMEM, the second issued before the first
is waited for.

A copy in writes its SMEM destination asynchronously, with the issuing thread's async-proxy
clock, and is known complete only to a thread that waited on the barrier it arrives on
(jax/_src/pallas/mosaic_gpu/interpret/gpu_callbacks.py: `AsyncCopyGmemToSmemTask.post_read`, a
`check_write` of the destination; `_barrier_wait` joins the barrier's clock into the waiter's).
A second copy into the same elements issued before any such wait writes them unordered with the
first: which data the buffer holds is not defined — on jax 0.10.2 and 0.12 alike.

Claimed for two loads of the same thread (an operation of no role is every thread's) with no
wait at all in between in that thread's program, on any barrier (a wait may carry the first copy's
completion through another barrier's arrival), both certain, boxes known to overlap.
"""

from __future__ import annotations

from wgmma_lsp.hazards.analysis import Hazard, thread_programs
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import overlap

CODE = "WG217"
_MAX_LOADS = 400


def loads_over_loads(events: list[Event]) -> list[Hazard]:
    loads = [i for i, e in enumerate(events) if e.kind == "load"]
    if len(loads) < 2 or len(loads) > _MAX_LOADS:
        return []
    out: list[Hazard] = []
    reported: set[int] = set()
    for _, program in thread_programs(events):
        pending: list[int] = []  # loads issued since the thread's last wait
        for i in program:
            ev = events[i]
            if ev.kind == "wait":
                pending.clear()
            elif ev.kind == "load":
                for j in pending:
                    first = events[j]
                    if i not in reported and first.certain and ev.certain and first.same_buffer(ev) \
                            and overlap(first.box, ev.box):
                        out.append(Hazard(CODE, i, j))
                        reported.add(i)
                        break
                pending.append(i)
    return out

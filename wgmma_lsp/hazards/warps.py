"""`pl.core_map(plgpu.WarpMesh(axis_name="w"))` inside a kernel: the four warps of the warpgroup as
the kernel's threads, the way JAX 0.12's GPU interpret mode runs them
(jax/_src/pallas/mosaic_gpu/interpret/jaxpr_interpret.py `_interpret_mpmd_map_p`: one interpreter
per warp, `thread=Warp(...)`, `lax.axis_index("w")` its warp id; `gpu_callbacks.py:
sync_warps_with_warpgroup` / `sync_warpgroup_with_warps` order the warpgroup's operations before
and after every warp's).

Followed only where the warps are the whole kernel: one warpgroup (no `num_threads` over 1), the
core_map the kernel's first operation and nothing after it, one such core_map. Then the log's
threads are the warps (`pl.when(w == k)` is warp k's), they share all the kernel's scratch, and
each instance of the kernel is four. Otherwise (an operation of the warpgroup before or after the
warps, whose ordering with them the thread analysis does not model) the body's operations are
what they were before: possible only, in no thread — silent.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: hazards.log.KernelLog, as a type: not imported, since log.py imports this module.
    KernelLog = Any

WARPS = 4  # mosaic_gpu/core.py: WarpMesh._NUM_WARPS_PER_WARPGROUP


def enter(log: KernelLog, axis: str) -> bool:
    """The warps' body is about to run: follow it as threads when it can be (see the module doc)."""
    if log.opaque or log.events or log.warps is not None or log.threads != 1 or log.thread_name is not None \
            or log.thread_role is not None or log.unroll is not None or log.loop_depth or log.maybe_depth:
        return False
    log.warps = (0, None, (log.threads, log.instances, log.shared))
    log.thread_name, log.threads, log.instances, log.shared = axis, WARPS, log.instances * WARPS, set(log.scratch)
    log.single_thread = False
    return True


def leave(log: KernelLog) -> None:
    """The warps' body ran: its events are the warps'."""
    if log.warps is not None and log.warps[1] is None:
        log.warps = (log.warps[0], len(log.events), log.warps[2])


def outside(log: KernelLog) -> None:
    """An operation outside the warps' body: their events become possible only, in no thread
    (what an unfollowed core_map's are), and the kernel one warpgroup again."""
    if log.warps is None:
        return
    start, end, (threads, instances, shared) = log.warps
    for ev in log.events[start:end if end is not None else len(log.events)]:
        ev.certain, ev.thread = False, None
    log.threads, log.instances, log.shared = threads, instances, shared
    log.thread_name = None
    log.warps = None

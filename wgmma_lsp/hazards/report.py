"""The hazards of a kernel's log, reported as findings of the WG2xx rules (warnings: a race is
a run-time fact of some executions, not an error JAX raises)."""

from __future__ import annotations

from wgmma_lsp.hazards import barrier_uses
from wgmma_lsp.hazards import release
from wgmma_lsp.hazards.analysis import Hazard, analyse, phases, same_for_all
from wgmma_lsp.hazards.log import Event, KernelLog
from wgmma_lsp.hazards.regions import may_overlap
from wgmma_lsp.rules import (
    barrier_phase_overrun, gmem_access_during_tma_store, instances_copy_same_gmem, wait_never_completes, smem_read_before_tma_wait, threads_write_same_smem, smem_write_during_tma_store, store_in_flight_at_exit, tma_load_uncommitted,
    tma_store_uncommitted,
)
from wgmma_lsp.rules.base import Related

_ACCESS = {"read": "Reading", "write": "Writing", "store": "Copying out (copy_smem_to_gmem)",
           "load": "Overwriting (copy_gmem_to_smem)"}


def _text(ev: Event, key: str, fallback: str) -> str:
    return ev.data.get(key) or fallback


def report_hazards(interp, log: KernelLog) -> None:
    # A race is not an exception: no `try` around the kernel catches it, and reporting one must
    # not mark a `try` as having raised (interpret/interp_try.py).
    saved, interp.handlers = interp.handlers, []
    try:
        _report(interp, log)
        barrier_uses.summarise(interp, log)  # for the hover on a barrier
    finally:
        interp.handlers = saved


def _report(interp, log: KernelLog) -> None:
    events = log.events
    seen: set[tuple] = set()
    refills = release.unreleased_refills(events, log.threads)
    for h in analyse(events, log.single_thread, log.ends_kernel) + \
            same_for_all(events, log.threads, log.instances, log.shared) + phases(events, log.single_thread) + \
            refills:
        access, other = events[h.access], events[h.other]
        if (h.code, access.line, h.other) in seen:  # `smem[...] += 1`: its read and write race alike
            continue
        if (h.code, access.span, other.span) in seen:  # the same pair at two steps of an unrolled loop
            continue
        seen.add((h.code, access.line, h.other))
        seen.add((h.code, access.span, other.span))
        if h.code in ("WG208", "WG209") and access.span is not None:
            _phase(interp, h, access)
            continue
        if access.span is None or other.span is None or (access.buffer is None and access.gmem is None):
            continue
        aval = (access.buffer or access.gmem).aval()  # type: ignore[union-attr]
        if h.code == "WG207":
            rule = gmem_access_during_tma_store.RULE
            what = {"load": "copy_gmem_to_smem reads", "gmem_read": "Reading", "gmem_write": "Writing"}[access.kind]
            interp.report(rule, rule.template.format(access=what, aval=other.gmem.aval() if other.gmem else aval,
                                                     store_line=other.line + 1, newer=h.newer),
                          access.span, access.line,
                          related=[Related(other.span, "the copy_smem_to_gmem that may still be writing it")],
                          data={"prefix": other.data.get("prefix"), "newer": h.newer})
            continue
        if h.code == release.CODE:
            from wgmma_lsp.hazards import release_report

            release_report.report(interp, h, events, aval, {x.access for x in refills})
        elif h.code == "WG200":
            _wg200(interp, h, access, other, aval, events)
        elif h.code == "WG201":
            _wg201(interp, h, access, other, aval, events)
        elif h.code == "WG205":
            rule = threads_write_same_smem.RULE
            interp.report(rule, rule.template.format(threads=log.threads, aval=aval), access.span, access.line,
                          related=[Related(access.span, "the same write, by each of the other threads")])
        elif h.code == "WG206":
            rule = instances_copy_same_gmem.RULE
            dst = access.gmem.aval() if access.gmem is not None else "GMEM"
            threads = log.threads if access.thread is None else 1
            interp.report(rule, rule.template.format(instances=h.newer, threads=threads,
                                                     blocks=log.instances // max(1, log.threads), aval=dst),
                          access.span, access.line,
                          related=[Related(access.span, "the same copy, by each of the other instances")])
        elif h.code == "WG203":
            rule = store_in_flight_at_exit.RULE
            end = log.body_end if access.func == log.body_func else None
            interp.report(rule, rule.template.format(aval=aval), access.span, access.line,
                          data={"prefix": access.data.get("prefix"), "insert_at": end})
        elif h.code == "WG204":
            rule = tma_load_uncommitted.RULE
            message = rule.template.format(aval=aval, what="read" if other.kind == "read" else "written",
                                           line=other.line + 1)
            interp.report(rule, message, access.span, access.line,
                          related=[Related(other.span, f"the thread's {'read' if other.kind == 'read' else 'write'} "
                                                       "the TMA engine is not ordered after")],
                          data={"prefix": access.data.get("prefix")})
        elif h.code == "WG202":
            rule = tma_store_uncommitted.RULE
            message = rule.template.format(aval=aval, write_line=other.line + 1)
            interp.report(rule, message, access.span, access.line,
                          related=[Related(other.span, "the write the TMA engine may not see")],
                          data={"prefix": access.data.get("prefix")})


def _phase(interp, h: Hazard, ev: Event) -> None:
    n, waited = h.waits
    barrier = ev.data.get("barrier_text") or "the barrier"
    if h.code == "WG209":
        rule = wait_never_completes.RULE
        message = rule.template.format(barrier=barrier, got=h.newer, n=n, phase=waited)
    else:
        rule = barrier_phase_overrun.RULE
        message = rule.template.format(barrier=barrier, n=n, phase=waited)
    interp.report(rule, message, ev.span, ev.line)


def _wg200(interp, h: Hazard, access: Event, load: Event, aval: str, events: list[Event]) -> None:
    rule = smem_read_before_tma_wait.RULE
    barrier = _text(load, "barrier_text", "its barrier")
    detail = ""
    if h.waits:
        w = events[h.waits[-1]]
        detail = f" (the barrier_wait at line {w.line + 1} waits on {_text(w, 'barrier_text', 'another barrier')})"
    message = rule.template.format(access=_ACCESS[access.kind], aval=aval, copy_line=load.line + 1,
                                   barrier=barrier, detail=detail)
    related = [Related(load.span, f"the copy_gmem_to_smem writing it, arriving on {barrier}")]
    if h.waits:
        related.append(Related(events[h.waits[-1]].span, "a wait on another barrier"))
    # A wait on the copy's barrier (slot) that comes later: the fix moves it up.
    later = next((e for e in events[h.access + 1:] if e.kind == "wait"
                  and (e.barrier is None or e.barrier is load.barrier and may_overlap(e.slot, load.slot))), None)
    data = {"barrier_span": load.data.get("barrier_span"), "prefix": load.data.get("prefix"),
            "same_function": load.func == access.func}
    if later is not None:
        data["later_wait_line"] = later.line
        data["later_wait_same_function"] = later.func == access.func and later.line > access.line
    interp.report(rule, message, access.span, access.line, related=related, data=data)


def _wg201(interp, h: Hazard, access: Event, store: Event, aval: str, events: list[Event]) -> None:
    rule = smem_write_during_tma_store.RULE
    waits = [e for e in events[h.other + 1:h.access] if e.kind == "wait_store" and e.n is not None]
    detail = f" (the wait_smem_to_gmem({waits[-1].n}) at line {waits[-1].line + 1} leaves it in flight)" \
        if waits else ""
    message = rule.template.format(access=_ACCESS[access.kind], aval=aval, store_line=store.line + 1,
                                   newer=h.newer, detail=detail)
    interp.report(rule, message, access.span, access.line,
                  related=[Related(store.span, "the copy_smem_to_gmem still reading it")],
                  data={"prefix": store.data.get("prefix"), "newer": h.newer})

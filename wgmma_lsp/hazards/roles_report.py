"""WG215 (threads of different roles on the same SMEM), WG216 (copies out over the same GMEM) and
WG217 (a copy in over SMEM an earlier copy in may still be writing), found in a kernel's log and
reported as warnings."""

from __future__ import annotations

from wgmma_lsp.hazards import release
from wgmma_lsp.hazards.analysis import Hazard
from wgmma_lsp.hazards.copies_out import overlapping_copies_out
from wgmma_lsp.hazards.load_over_load import loads_over_loads
from wgmma_lsp.hazards.log import Event, KernelLog
from wgmma_lsp.hazards.regions import may_overlap
from wgmma_lsp.hazards.roles import Clocked, cross_role
from wgmma_lsp.rules import copies_out_overlap_gmem, roles_access_same_smem, tma_load_over_pending_load
from wgmma_lsp.rules.base import Related

_ACCESS = {"read": "Reading", "write": "Writing"}


def report_roles(interp, log: KernelLog) -> None:
    # A race is not an exception: no `try` around the kernel catches it (as hazards/report.py).
    saved, interp.handlers = interp.handlers, []
    try:
        _report(interp, log)
    finally:
        interp.handlers = saved


def _report(interp, log: KernelLog) -> None:
    events = log.events
    views: list[Clocked] | None = None
    seen: set[tuple] = set()
    if log.thread_name is not None:
        found, views = cross_role(events, log.threads, log.shared)
        for h in found:
            h, later = _oriented(h, events, views)
            key = (events[h.access].span, events[h.other].span)
            if key not in seen:
                seen.add(key)
                _wg215(interp, h, events, later, log.thread_name)
    for h in overlapping_copies_out(events, log.threads, log.instances, views):
        access, other = events[h.access], events[h.other]
        key = (access.span, other.span)
        if key in seen or access.span is None or other.span is None or access.gmem is None:
            continue
        seen.add(key)
        rule = copies_out_overlap_gmem.RULE
        if h.newer >= 0:
            detail = f": no plgpu.wait_smem_to_gmem({h.newer}) (without wait_read_only) in between"
        else:
            detail = f" (thread {other.thread}'s, unordered with thread {access.thread}'s)"
        interp.report(rule, rule.template.format(aval=access.gmem.aval(), store_line=other.line + 1, detail=detail),
                      access.span, access.line,
                      related=[Related(other.span, "the copy_smem_to_gmem that may still be writing it")],
                      data={"prefix": access.data.get("prefix"), "newer": h.newer})
    pending = loads_over_loads(events)
    if pending:
        # A refill a consumer thread has not released is WG210's (its fix, a wait on the release
        # barrier, orders the refill after the first copy too): one warning there.
        refills = {x.access for x in release.unreleased_refills(events, log.threads)} if log.threads > 1 else set()
        for h in pending:
            if h.access not in refills:
                _wg217(interp, h, events)


def _wg217(interp, h: Hazard, events: list[Event]) -> None:
    access, first = events[h.access], events[h.other]
    if access.span is None or first.span is None or access.buffer is None:
        return
    rule = tma_load_over_pending_load.RULE
    barrier = first.data.get("barrier_text") or "its barrier"
    message = rule.template.format(aval=access.buffer.aval(), copy_line=first.line + 1, barrier=barrier)
    later = next((e for e in events[h.access + 1:] if e.kind == "wait" and (e.thread is None or e.thread == access.thread)
                  and e.barrier is first.barrier and e.barrier is not None and may_overlap(e.slot, first.slot)), None)
    data = {"barrier_span": first.data.get("barrier_span"), "prefix": first.data.get("prefix"),
            "same_function": first.func == access.func, "one_arrival": first.data.get("num_arrivals") == 1}
    if later is not None:
        if later.func != access.func or later.line <= access.line or later.in_loop != access.in_loop:
            data["one_arrival"] = False  # a wait elsewhere: neither moved nor doubled
        data["later_wait_line"] = later.line
    interp.report(rule, message, access.span, access.line,
                  related=[Related(first.span, f"the copy_gmem_to_smem still writing it, arriving on {barrier}")],
                  data=data)


def _wg215(interp, h: Hazard, events: list[Event], later: Event | None, axis: str) -> None:
    """`later`: the wait of the access's thread its fix moves up (`_later_wait`)."""
    access, other = events[h.access], events[h.other]
    if access.span is None or other.span is None or access.buffer is None:
        return
    rule = roles_access_same_smem.RULE
    q, p = h.newer, h.waits[0]
    detail = "" if access.thread is not None and other.thread is not None else \
        f" (a statement outside any pl.when on {axis} runs in every thread)"
    message = rule.template.format(access=_ACCESS[access.kind], aval=access.buffer.aval(), thread=q,
                                   other_thread=p, other_access=other.kind, other_line=other.line + 1,
                                   detail=detail)
    data = {"later_wait_line": later.line} if later is not None else {}
    interp.report(rule, message, access.span, access.line,
                  related=[Related(other.span, f"thread {p}'s {other.kind}, not ordered with it")], data=data)


def _oriented(h: Hazard, events: list[Event], views: list[Clocked] | None) -> tuple[Hazard, Event | None]:
    """The pair as the fix sees it: the access whose thread has a wait to move up goes first;
    and that wait (None: neither thread has one)."""
    if views is None:
        return h, None
    later = _later_wait(events, views, h)
    if later is not None:
        return h, later
    swapped = Hazard(h.code, h.other, h.access, newer=h.waits[0], waits=(h.newer,))
    later = _later_wait(events, views, swapped)
    return (swapped, later) if later is not None else (h, None)


def _later_wait(events: list[Event], views: list[Clocked], h: Hazard) -> Event | None:
    """A wait of the access's thread q, after the access in the same function, on a barrier
    thread p arrives on after the other access, with an arrival that does not depend on anything q
    does from the access on: moved before the access, it orders the access after the other one."""
    q, p, j, i = h.newer, h.waits[0], h.access, h.other
    access = events[j]
    vq, vp = views[q], views[p]
    if j not in vq.position or i not in vp.position:
        return None
    pos_j, pos_i = vq.position[j], vp.position[i]
    for k in vq.program[pos_j + 1:]:
        w = events[k]
        if w.kind != "wait" or w.barrier is None or not w.certain or w.in_loop or access.in_loop \
                or w.func != access.func or w.line <= access.line:
            continue
        for pos, a in enumerate(vp.program):
            arr = events[a]
            clock = vp.clocks[pos]
            if arr.kind in ("arrive", "load") and arr.barrier is w.barrier and may_overlap(arr.slot, w.slot) \
                    and arr.certain and clock[p] > pos_i and clock[q] <= pos_j:
                return w
        return None  # the first later wait only: moving a later one past it changes more
    return None

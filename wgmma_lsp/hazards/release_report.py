"""WG210's warning: at the producer's refill, the consumer's use as related information, and the
wait on the release barrier as the fix."""

from __future__ import annotations

import re

from wgmma_lsp.hazards import release
from wgmma_lsp.hazards.analysis import Hazard
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.rules import refill_without_release
from wgmma_lsp.rules.base import Related

_ROOT = LazyPattern(r"^([A-Za-z_]\w*)(.*)$", re.S)


def _wait_text(load: Event, arrive: Event | None) -> str | None:
    """`plgpu.barrier_wait(empty.at[slot])`: the release barrier, indexed as the copy's barrier is."""
    if arrive is None or load.data.get("prefix") is None:
        return None
    full = _ROOT.match(load.data.get("barrier_text") or "")
    empty = _ROOT.match(arrive.data.get("barrier_text") or "")
    if full is None or empty is None or full.group(2) != empty.group(2) or full.group(1) == empty.group(1) \
            or "\n" in full.group(0):
        return None
    return f"{load.data['prefix']}barrier_wait({empty.group(1)}{full.group(2)})"


def report(interp, h: Hazard, events: list[Event], aval: str, claimed: set[int]) -> None:
    """`claimed`: the refills claimed in this kernel (their indices in the log)."""
    load, use = events[h.access], events[h.other]
    arrive = release.release_arrive(events, h)
    rule = refill_without_release.RULE
    text = arrive.data.get("barrier_text") if arrive is not None else None
    message = rule.template.format(aval=aval, consumer=use.thread, line=use.line + 1,
                                   release=f" (such as {text})" if text else "")
    related = [Related(use.span, f"thread {use.thread}'s use of the slot the copy may overwrite")]
    if arrive is not None and arrive.span is not None:
        related.append(Related(arrive.span, "the release barrier the consumer arrives on"))
    wait = _wait_text(load, arrive)
    # The wait goes before every step of the copy: only when each one is such a refill.
    same_line = [i for i, e in enumerate(events) if e.kind == "load" and e.span == load.span]
    if not all(i in claimed for i in same_line):
        wait = None
    interp.report(rule, message, load.span, load.line, related=related, data={"wait": wait})

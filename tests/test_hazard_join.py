"""The race analysis's barrier waits take in arrivals incrementally (hazards/analysis.py
`_Pass._take_arrivals`): the same hazards as joining every matching arrival at every wait, the
straightforward rule kept here as the reference, on random kernel logs (loads, arrivals and waits
on barrier arrays at known and unknown slots, reads, writes, copies out, commits, one or several
threads).

(It made the race analysis of jax's attention_mgpu.py about 20 times faster: a wait no longer
re-joins every arrival made so far.)
"""

from __future__ import annotations

import random

from wgmma_lsp.hazards import analysis
from wgmma_lsp.hazards.log import Event
from wgmma_lsp.hazards.regions import may_overlap


class _Reference(analysis._Pass):
    def _take_arrivals(self, ev: Event, known: set[int]) -> None:
        for key, got in self.arrivals.get(id(ev.barrier), []) + self.before.get(id(ev.barrier), []):
            if self.events[key].barrier is ev.barrier and may_overlap(self.events[key].slot, ev.slot):
                known.update(got)


def _random_log(rng: random.Random) -> list[Event]:
    buffers = [object() for _ in range(2)]
    barriers = [object() for _ in range(2)]
    threads = rng.choice((None, 2))
    events = []
    for _ in range(rng.randint(1, 40)):
        kind = rng.choice(("load", "load", "wait", "wait", "arrive", "read", "write", "store", "commit",
                           "wait_store"))
        row = rng.randrange(4)
        box = None if rng.random() < 0.1 else ((row, row + rng.randint(1, 2)), (0, 8))
        slot = None if rng.random() < 0.2 else ((rng.randrange(3), rng.randrange(3) + 1),)
        ev = Event(kind, rng.random() < 0.9, None, 0)
        if kind in ("load", "read", "write", "store"):
            ev.buffer, ev.box = rng.choice(buffers), box  # type: ignore[assignment]
        if kind in ("load", "wait", "arrive"):
            ev.barrier = None if rng.random() < 0.05 else rng.choice(barriers)  # type: ignore[assignment]
            ev.slot = slot
        if kind == "wait_store":
            ev.n = rng.choice((None, 0, 1))
        if threads is not None and rng.random() < 0.5:
            ev.thread = rng.randrange(threads)
        events.append(ev)
    return events


def _hazards(pass_class: type, events: list[Event], single: bool, ends: bool) -> list:
    real = analysis._Pass
    analysis._Pass = pass_class  # type: ignore[misc]
    try:
        return analysis.analyse(events, single_thread=single, ends_kernel=ends)
    finally:
        analysis._Pass = real  # type: ignore[misc]


def test_incremental_waits_find_what_joining_every_arrival_finds() -> None:
    rng = random.Random(20261206)
    found = 0
    for _ in range(3000):
        events = _random_log(rng)
        single, ends = rng.random() < 0.5, rng.random() < 0.5
        expected = _hazards(_Reference, events, single, ends)
        assert _hazards(analysis._Pass, events, single, ends) == expected
        found += bool(expected)
    assert found > 300  # the logs are not all race-free: the comparison says something

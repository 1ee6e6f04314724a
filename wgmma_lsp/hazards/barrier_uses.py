"""Who arrives on each barrier and who waits on it, for the hover on a barrier.

After a kernel's log was analysed (`report.report_hazards`), its arrivals (a `copy_gmem_to_smem`
that arrives on the barrier, a `barrier_arrive`) and waits are kept by the barrier's allocation
(`interp.barrier_uses`, then `Analysis.barriers`). Only complete logs are summarised: a kernel
whose log has a hole (a pipeline, a ref given to a call the interpreter does not follow) shows
nothing rather than a partial list.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wgmma_lsp.hazards.log import KernelLog
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

_WHAT = {"load": "arrives: `copy_gmem_to_smem`", "arrive": "arrives: `barrier_arrive`",
         "wait": "waits: `barrier_wait`"}


@dataclass
class BarrierUses:
    """The uses of one barrier allocation: (0-based line, what, on every path) per use."""

    uses: set[tuple[int, str, bool]] = field(default_factory=set)

    def lines(self) -> list[str]:
        """One line per kind of use, with the 1-based lines (those on some paths only marked)."""
        out = []
        for kind in ("arrives", "waits"):
            entries = sorted({(line, what, sure) for line, what, sure in self.uses if what.startswith(kind)})
            if not entries:
                continue
            by_what: dict[str, list[str]] = {}
            for line, what, sure in entries:
                by_what.setdefault(what, []).append(f"{line + 1}" + ("" if sure else " (on some paths)"))
            for what, lines in by_what.items():
                out.append(f"{what} at line{'s' if len(lines) > 1 else ''} {', '.join(lines)}")
        return out


def summarise(interp: Any, log: KernelLog) -> None:
    uses: dict[Span, BarrierUses] = interp.__dict__.setdefault("barrier_uses", {})
    for ev in log.events:
        what = _WHAT.get(ev.kind)
        if what is None or ev.barrier is None or ev.barrier.origin is None or ev.span is None:
            continue
        uses.setdefault(ev.barrier.origin, BarrierUses()).uses.add((ev.span.line, what, ev.certain))

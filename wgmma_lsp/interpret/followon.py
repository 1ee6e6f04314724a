"""JAX stops at its first error: what a run would report after it, JAX never raises.

A run is one context's execution (`interp.ctx`: an entry point, a config, a test's parameter
set, a sweep's combination, the call site that refines one) within one run scope: each piece of
the driver (`incomplete.Pieces.run`: a module statement, a function analysed with nothing known)
and each `interp.in_context` starts one, so contexts are each their own run, as everywhere else
in the analysis (a second call site, a second configuration, is checked whatever the first
raised). Once a report is certain there — on every path of that run, no handler around it that
may catch it — JAX has raised, and nothing after it on that run executes:

- an error of the trace stage ("trace", "construct": a Python exception while the user's code
  runs) ends the run: every later report in that context, whatever its stage, is dropped (a
  lowering error: JAX lowers only what traced; a run-time hazard, WG2xx: a kernel whose
  tracing fails never runs, nor does interpret mode's race detector — `hazards/log.finished`;
  a deprecation: the call that would warn is never made). For that context only: a finding
  shared with other contexts keeps them;
- a lowering error ends that rule's checks in the kernel being lowered: JAX lowers the traced
  program in order and stops at its first error, so a second instance of the same check (one
  check of one JAX function, made in one phase of the lowering) is never made. Other lowering
  rules stay: their checks may run in another phase (shared memory is counted at the launch,
  before the body is lowered; Warpgroup's layout inference after it), whose order the
  analyzer's does not follow — except a rule `checked_last` (a store's transfer plan), which any
  certain lowering error reported before it in the body ends;
- the lowering findings a kernel made before a certain trace error later in its body are
  dropped when the body ends (`interp_records.settle_lowering_findings`).

A report on some paths only (a warning) ends nothing. The tool's own diagnostics (WG9xx) are not
JAX's and never dropped. A memoised call keeps a finding dropped by an end from before it began,
for replays in runs that did not end (`keeps`); not one dropped by an end inside it (whenever
the call runs, JAX raises first).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any
    from wgmma_lsp.rules.base import Rule

#: The stages whose error is a Python exception raised while the user's code runs (tracing,
#: or building an API object): JAX's run ends there.
ENDING = ("trace", "construct")


def ended_at(interp: "Any", rule: "Rule", ctx: "Any") -> int | None:
    """The serial number of the report after which JAX never raises `rule` here, in `ctx`, on
    the running run; None when it may."""
    stage = rule.installed_stage()
    if stage == "tool":
        return None
    at = interp.ended.get(ctx)
    if stage == "lower" and interp.kernel.inside:
        lowered = interp.kernel.lowered
        same = lowered.get(rule.code)
        if rule.checked_last and lowered:  # after every other check: the first error ends it
            same = min(lowered.values())
        if same is not None and (at is None or same > at):
            at = same
    return at


def note(interp: "Any", rule: "Rule", ctx: "Any", certain: bool) -> None:
    """A report kept in `ctx`: when certain, JAX raised here (see the module's docstring)."""
    if not certain:
        return
    stage = rule.installed_stage()
    if stage in ENDING:
        interp.ended.setdefault(ctx, interp.report_serial)
    elif stage == "lower" and interp.kernel.inside:
        interp.kernel.lowered.setdefault(rule.code, interp.report_serial)


def keeps(entry: "Any", ended: int) -> bool:
    """Whether a memoised call's run (`entry`) keeps a finding dropped by an end at serial
    `ended`: only if that end came before the call began (a replay of the call in a run that
    did not end reaches it), not inside it (whenever the call runs, JAX raises first)."""
    return entry.started >= ended


class RunScope:
    """`with RunScope(interp):` a new run scope, nothing ended in it yet (a piece of the driver,
    a context entered: an entry point, a config, a sweep's combination, each its own run); the
    scope before is put back after. (A class, not a generator: entered for every sweep
    combination.)"""

    __slots__ = ("interp", "saved")

    def __init__(self, interp: "Any") -> None:
        self.interp = interp

    def __enter__(self) -> None:
        interp = self.interp
        self.saved = interp.ended
        interp.ended = {}

    def __exit__(self, *exc: object) -> None:
        self.interp.ended = self.saved

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
  dropped when the body ends (`interp_records.settle_lowering_findings`);
- a certain lowering error also ends the run, at the point where JAX raises it: when the call it
  is lowered in returns to code that is not traced. JAX traces a whole staged call before it
  lowers it — a kernel's call itself (`plgpu.kernel(...)(...)`, `pl.pallas_call(...)(...)`,
  whose primitive an eager call binds, lowers and compiles at once), a jitted function's call
  or `.lower()`, a kernel library's op (`entry/op_dispatch.py`: its `custom_vjp` traces the
  op's forward pass) — so a trace error found later inside the same call (a second kernel of
  a jitted function) is raised first, and still reported; what follows the call is not. The
  boundary is known only where the analysis runs the code Python runs (`eager_root`: a test
  function, a `__main__` block) and the outermost modelled call running there
  (`interp.api_call`) is one of those (`LOWERING_CALLS`): inside any other (`jax.vmap`,
  `lax.cond`, `.trace()`, an unknown library's call, ...) or a function analysed with nothing
  known, nothing ends (the kernel's error is raised where JAX lowers it, not proved here). A
  body's error is pending (`interp.pending_ends`, by context) from the body's end
  (`kernel_lowered`) to the call's return (`at_root`, `returned`), and is dropped there if a
  `try` of the run is open (a handler may catch another error raised in the call first, and
  the run go on). A memoised call that held a pending error (`MemoEntry.lowering_end`) pends
  it again when replayed; one the end of which fell inside is not stored (its findings after
  the end would be missing where the call is traced instead).

Certain here means on every path of the run from its start (`certain_in_run`), whatever came
before the run: a tuning loop's combination after one that may have raised (`main()` may have
left, so all it does next is a warning) is still a run of its own, in which JAX stops at its
first error. Caught by a `try` of the run (`except Exception: continue` around the trace), an
error ends the rest of that `try`'s body instead (`_TryScope.dead`: JAX's trace stopped there).

A report on some paths only (a warning) ends nothing; it does keep later reports of its run from
counting as certain there (`RunBase.maybe_raised`). The tool's own diagnostics (WG9xx) are not
JAX's and never dropped. A memoised call keeps a finding dropped by an end from before it began,
for replays in runs that did not end (`keeps`); not one dropped by an end inside it (whenever
the call runs, JAX raises first).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable
    from wgmma_lsp.rules.base import Rule

#: The stages whose error is a Python exception raised while the user's code runs (tracing,
#: or building an API object): JAX's run ends there.
ENDING = ("trace", "construct")

#: `interp.api_call` while a kernel library's op call runs (entry/op_dispatch.py).
OP_CALL = "op()"
#: The modelled calls (as `interp.api_call` names them) that JAX traces whole and lowers
#: before they return, made from code that is not traced (see the module's docstring).
LOWERING_CALLS = frozenset(("plgpu.kernel()", "pl.pallas_call()", "jax.jit()", "wrapped:jax.jit.lower",
                            OP_CALL))
#: Modelled calls that call what they are given as Python does, untraced: no `api_call`.
EAGER_CALLS = frozenset(("absl.app.run",))


def ended_at(interp: "Any", rule: "Rule", ctx: "Any") -> int | None:
    """The serial number of the report after which JAX never raises `rule` here, in `ctx`, on
    the running run; None when it may."""
    stage = rule.installed_stage()
    if stage == "tool":
        return None
    at = interp.ended.get(ctx)
    for scope in interp.handlers:  # (outermost first: the first dead one died first)
        if scope.dead:
            if at is None or scope.dead < at:
                at = scope.dead
            break
    if stage == "lower" and interp.kernel.inside:
        lowered = interp.kernel.lowered
        same = lowered.get(rule.code)
        if rule.checked_last and lowered:  # after every other check: the first error ends it
            same = min(lowered.values())
        if same is not None and (at is None or same > at):
            at = same
    return at


def raised(interp: "Any", rule: "Rule", message: str, ctx: "Any", sure: bool, caught: bool,
           condition: str, inside: bool = True) -> bool:
    """A report kept in `ctx` (`sure`: on every path, nothing around it that may catch it): when
    it is on every path of the run, JAX raised here (see the module's docstring). A memoised
    call's replayed finding: `inside`, whether it was certain within the call. Whether it was
    noted so (`note`)."""
    if sure:
        note(interp, rule, ctx, True)
        return True
    base = interp.run_base
    if condition or base is None:
        return False
    ending = rule.installed_stage() in ENDING
    if not (inside and certain_in_run(interp)):
        if ending:
            base.maybe_raised = True  # on some paths: what follows in the run is on the others
        return False
    if not caught:
        note(interp, rule, ctx, True)
        return True
    if ending:
        # A `try` of the run may catch it: the rest of its body is never run; after it, the run
        # goes on where the handler caught it, not on the paths where it did not.
        base.maybe_raised = True
        if not interp.end_try_bodies(rule, message, base.handlers):
            note(interp, rule, ctx, True)  # only `try`s around the run: it ends
            return True
    return False


def note(interp: "Any", rule: "Rule", ctx: "Any", certain: bool) -> None:
    """A report kept in `ctx`: when certain, JAX raised here (see the module's docstring)."""
    if not certain:
        return
    stage = rule.installed_stage()
    if stage in ENDING:
        interp.ended.setdefault(ctx, interp.report_serial)
    elif stage == "lower" and interp.kernel.inside:
        interp.kernel.lowered.setdefault(rule.code, interp.report_serial)


def at_root(interp: "Any", name: str, run: "Callable[[], Any]") -> "Any":
    """`run()`, a modelled call named `name` made from code the analysis runs as Python does
    (`interp.eager_root`, `interp.api_call` None): while it runs it is `interp.api_call`; when
    it returns, the lowering errors pending in it end their runs (`returned`). (Only under an
    eager root: nowhere else is the outermost call read — `kernel_lowered` and
    `replayed_lowering` act only there — so the calls elsewhere are not wrapped.)"""
    interp.api_call = name
    try:
        result = run()
    except BaseException:
        interp.pending_ends.clear()  # (the analysis stopped: nothing returned)
        raise
    finally:
        interp.api_call = None
    if interp.pending_ends:
        returned(interp)
    return result


def kernel_lowered(interp: "Any") -> None:
    """A kernel body ended, lowered (not in interpret mode): if a certain lowering error was
    reported in it (`kernel.lowered`), JAX raises it when the outermost staged call it runs in
    returns, if that call is one JAX lowers before returning, made from untraced code."""
    if interp.kernel.lowered and interp.eager_root and interp.api_call in LOWERING_CALLS:
        _pend(interp, interp.ctx)


def replayed_lowering(interp: "Any", ctx: "Any") -> None:
    """A memoised call that held a pending lowering error (`MemoEntry.lowering_end`) replayed
    one of its lowering findings as certain in `ctx`: pending again, or, replayed in untraced
    code (the kernel's staged call inside it returned), ending the run after the call."""
    if interp.kernel.inside or not interp.eager_root:
        return  # (inside a kernel: `kernel.lowered` has it, for the body's end)
    root = interp.api_call
    if root is None:
        _pend(interp, ctx)
        returned(interp)
    elif root in LOWERING_CALLS:
        _pend(interp, ctx)


def _pend(interp: "Any", ctx: "Any") -> None:
    interp.pending_ends.add(ctx)
    for entry in interp.captures:
        entry.lowering_end = True


def returned(interp: "Any") -> None:
    """A staged call with pending lowering errors returned to untraced code: each context it
    raised in ends here — unless a `try` of the run is open around it (a handler may catch an
    error the call raised first, and the run go on after it). The calls running now hold the
    end: none of them is memoised (replayed where the call is traced, their findings after
    the end would be missing)."""
    pending, interp.pending_ends = interp.pending_ends, set()
    base = interp.run_base
    if base is None or len(interp.handlers) != base.handlers:
        return
    for ctx in pending:
        interp.ended.setdefault(ctx, interp.report_serial)
    interp.not_replayable()


def keeps(entry: "Any", ended: int) -> bool:
    """Whether a memoised call's run (`entry`) keeps a finding dropped by an end at serial
    `ended`: only if that end came before the call began (a replay of the call in a run that
    did not end reaches it), not inside it (whenever the call runs, JAX raises first)."""
    return entry.started >= ended


class RunBase:
    """What a run began under: the uncertain branches it runs inside, how many paths had left
    each frame and loop running then (`Frame.ends`, `_LoopExits.stops`), and whether an error
    of its own was raised on some paths since (`maybe_raised`)."""

    __slots__ = ("depth", "frames", "loops", "maybe_raised", "handlers")

    def __init__(self, interp: "Any") -> None:
        self.depth = interp.uncertain_depth
        self.handlers = len(interp.handlers)  # the `try`s around the run (not the run's own)
        self.frames = {id(f): f.ends for f in interp.stack}
        self.loops = {id(lp): lp.stops for lp in interp.loops if lp is not None}
        self.maybe_raised = False


def certain_in_run(interp: "Any") -> bool:
    """Whether what runs here runs on every path of the running run from its start: no branch
    entered since that may not run, no path that left a frame or a loop since (frames and loops
    entered since: none that may have left them), no error of the run raised on some paths.
    What made the run itself uncertain (an earlier combination's `raise`) does not count."""
    base = interp.run_base
    if base is None or base.maybe_raised or interp.uncertain_depth != base.depth:
        return False
    frames = base.frames
    for f in interp.stack:
        ends = frames.get(id(f))
        if f.maybe_returned if ends is None else f.ends != ends:
            return False
    loops = base.loops
    for lp in interp.loops:
        if lp is not None:
            stops = loops.get(id(lp))
            if lp.maybe_stopped if stops is None else lp.stops != stops:
                return False
    return True


class RunScope:
    """`with RunScope(interp):` a new run scope, nothing ended in it yet (a piece of the driver,
    a context entered: an entry point, a config, a sweep's combination, each its own run); the
    scope before is put back after. (A class, not a generator: entered for every sweep
    combination.)"""

    __slots__ = ("interp", "saved", "saved_base", "saved_pending")

    def __init__(self, interp: "Any") -> None:
        self.interp = interp

    def __enter__(self) -> None:
        interp = self.interp
        self.saved, self.saved_base, self.saved_pending = interp.ended, interp.run_base, interp.pending_ends
        interp.ended = {}
        interp.run_base = RunBase(interp)
        interp.pending_ends = set()

    def __exit__(self, *exc: object) -> None:
        interp = self.interp
        interp.ended, interp.run_base, interp.pending_ends = self.saved, self.saved_base, self.saved_pending


#: The decorators a test function may have and still be called as it is written (by pytest,
#: absltest): their module's name, the root of the decorator's expression.
TEST_DECORATORS = frozenset(("pytest", "parameterized", "absltest", "unittest"))


def plain_test(node: "Any") -> bool:
    """Whether a test function's `def` (an ast.FunctionDef) is called as written: no decorator
    but a test framework's (one that may trace it, `@jax.jit`, is not run here as Python)."""
    for d in node.decorator_list:
        while True:  # the root name of `pytest.mark.parametrize(...)`
            if d.__class__.__name__ == "Call":
                d = d.func
            elif d.__class__.__name__ == "Attribute":
                d = d.value
            else:
                break
        if getattr(d, "id", None) not in TEST_DECORATORS:
            return False
    return True


class Untraced:
    """`with Untraced(interp, untraced):` what runs in it runs as Python runs it (a test
    function, a `__main__` block), not under a JAX trace, if `untraced`: where a lowering error
    ends the run is known there (`kernel_lowered`)."""

    __slots__ = ("interp", "saved", "untraced")

    def __init__(self, interp: "Any", untraced: bool = True) -> None:
        self.interp = interp
        self.untraced = untraced

    def __enter__(self) -> None:
        interp = self.interp
        self.saved = interp.eager_root, interp.api_call
        interp.eager_root, interp.api_call = self.untraced, None

    def __exit__(self, *exc: object) -> None:
        self.interp.eager_root, self.interp.api_call = self.saved

"""`for` and `while`: unrolled loops, sweeps over unknown trip counts, loop-carried values."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from wgmma_lsp import logs
from wgmma_lsp.entry.context import Context, binding_text
from wgmma_lsp.interpret import classes, generators, mutation, operators, sweep_reuse
from wgmma_lsp.interpret.block_exits import _breaks, has_break, has_continue, leaves_loop
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.interp_base import MAX_UNROLL, mark_uncertain
from wgmma_lsp.interpret.observe import Swept, raw
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ArrayVal,
    ClassVal,
    Const,
    DictVal,
    InstanceVal,
    SetVal,
    TupleVal,
    Value,
    join,
    next_born,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


class LoopsMixin:
    """`for` and `while`: unrolled loops, sweeps over unknown trip counts, loop-carried values."""

    def exec_For(self, s: ast.For, env: Env) -> None:
        it = self.eval(s.iter, env)
        items = self.iter_items(it)
        if self.ctx is not None and self.ctx.open and not self.silent and items \
                and _names_only(s.target):
            self.sweep(s, env, it, items)
            return
        self.loops.append(None)  # its `break`/`continue` are its own
        weight = self.unroll_weight
        try:
            short = items is not None and len(items) <= 8
            if short and self._nest_too_big(len(items)):
                short = False  # (the nest of a function analysed with nothing known: a loop)
            if short:
                self.unroll_weight = weight * len(items)
            elif self.unroll_cap is not None:
                self.unroll_weight = weight * 2  # (the body runs about twice: `loop`)
            if unrolled := short and not leaves_loop(s.body):
                # Short known iterations are unrolled: each iteration sees its own item (a
                # `return` that may be taken makes the later ones uncertain; one taken ends them).
                for item in items:
                    self.assign(s.target, item, env, None)
                    self.exec_block(s.body, env)
                    if self._returned():
                        return
            elif short and _names_only(s.target) and not _optimistic_handlers(s.body):
                # With its own `break`/`continue`: unrolled too, each iteration's exits followed
                # as a sweep's are; once a `break` may have run, the later iterations may not.
                self.loops.pop()
                try:
                    broke = False
                    for item in items:
                        with self.uncertain(broke):
                            self.assign(s.target, item, env, None)
                        left, broke_here = self._exits_iteration(s, env, broke)
                        if left and broke_here and not broke and not has_continue(s.body):
                            return  # a `break` ran on every path: the loop ends, no `else`
                        broke = broke or broke_here
                finally:
                    self.loops.append(None)
                if broke:
                    # Where a `break` that may have run left the names is not kept (its path is
                    # not merged): what the body binds is not known after the loop.
                    for name in {*_target_names(s.target), *_stored_names(s.body)}:
                        env.vars[name] = UNKNOWN
                unrolled = not broke
            else:
                elem = self.iter_element(it, items)
                nonempty = bool(items) if items is not None else self.known_nonempty(it)
                self.loop(env, s.target, elem, s.body, certain=nonempty)
        finally:
            self.loops.pop()
            self.unroll_weight = weight
        self.loop_else(s, env, unrolled=unrolled)

    def _nest_too_big(self, n: int) -> bool:
        """Would unrolling a loop of `n` items here run the innermost body more than
        `unroll_cap` times? (Only with a cap, and never inside a kernel's body, whose loops JAX
        unrolls as it traces.) A configuration enumerator of eight nested loops (1,440 configs
        in tokamax's GLU kernel module) is analysed as loops of unknown trip count instead: its
        values are joined, not enumerated."""
        if self.unroll_cap is None or self.unroll_weight * n <= self.unroll_cap or self.kernel.inside:
            return False
        self.unroll_joined = True
        return True

    def _returned(self) -> bool:
        """Whether the path running now has left its function (a `return` or `raise` taken)."""
        return bool(self.stack) and self.stack[-1].returned

    def loop_else(self, s: ast.For | ast.While, env: Env, unrolled: bool = False) -> None:
        """A loop's `else:` runs when no `break` left the loop: for sure when its body has no
        `break` of its own (or the loop ran as Python runs it), else perhaps."""
        if not s.orelse:
            return
        if unrolled or not has_break(s.body):
            self.exec_block(s.orelse, env)
        else:
            self.branch(env, lambda e: self.exec_block(s.orelse, e), lambda e: None)

    def sweep(self, s: ast.For, env: Env, it: Value, items: list[Value]) -> None:
        """A loop over known values inside an entry point (a tuning sweep): each iteration is
        its own context, checked one by one while the budget lasts; what it cuts is said.
        A combination that agrees with one already run on every value that run looked at, from
        the same state, is a repeat of it: its context is added where that run left its own,
        without running the body again (interpret/sweep_reuse.py)."""
        from wgmma_lsp.interpret.values import ProductVal

        order = it.covering_order() if isinstance(it, ProductVal) else list(range(len(items)))
        assert self.ctx is not None
        origin = self.caller_name()
        line = s.lineno - 1
        span = self.span(s.iter)
        # Exits inside `except` handlers run only once an error was caught (see exec_Try).
        leaves = _breaks(s.body, handlers=False)
        runs: list[sweep_reuse.IterationRun] = []
        # Until an iteration writes to an object made before it (a single combination has
        # nothing to repeat).
        reuse = len(items) > 1
        scope = next((f.func.node for f in reversed(self.stack) if f.func is not None), self.tree)
        carried = sweep_reuse.carried_names(s.body, scope) if reuse else frozenset()
        assigned = sweep_reuse.assigned_names(s.body) if reuse else set()
        after_break = False  # an iteration run so far may have left the loop
        done = 0  # combinations checked: run, or repeats of one run
        last = ""  # what happened to the last combination: "run", "repeat", "cut"
        written = len(self.outside_written)  # objects made before an iteration that it changed
        first_exit: dict[str, Value] | None = None  # the names when a `break` may first have left
        for i in order:
            if after_break and first_exit is None:
                first_exit = dict(env.vars)
            start = self.steps
            over = done and self.sweep_spent() >= self.sweep_budget
            if over and (not reuse or leaves or self.handlers):
                # A combination left out could have left the loop or been caught: nothing
                # after it is known to run.
                break
            if self.sweep_depth == 0:
                self.sweep_start = start
            item = items[i]
            rep = None
            if reuse:
                with self.obs.unobserved():
                    values = _item_values(s.target, item)
                    state = None
                    if not over or any(r.may_repeat(values) for r in runs):
                        carried_values, state = self.sweep_state(carried, env, after_break)
                        values.update(carried_values)
                        rep = next((r for r in runs if r.repeated_by(values, state)), None)
                if rep is None and over:
                    # Left out by the budget (later combinations may still repeat a run one);
                    # what it would have carried into the next iteration is unknown.
                    for name in carried:
                        env.vars[name] = UNKNOWN
                    last = "cut"
                    continue
            self.assign(s.target, item, env, None)
            with self.obs.unobserved():
                bindings = [(name, text) for name, text in _bindings(s.target, item) if text is not None]
                ctx = self.ctx.with_bindings(bindings, origin, line, span)
            if not reuse:
                with self.in_context(ctx):
                    after_break = self._sweep_iteration(s, env, after_break, start) or after_break
                done += 1
                last = "run"
                continue
            if rep is not None:
                self._repeat_iteration(rep, ctx)
                env.vars.update(rep.outgoing)
                after_break = after_break or rep.broke
                done += 1
                last = "repeat"
                continue
            self._watch_values(s, list(values), env)
            run = sweep_reuse.IterationRun(ctx, values, state)
            before = self._iteration_marks()
            writes = self.outside_writes
            saved_born = self.iteration_born
            self.iteration_born = next_born()
            log: set = set()
            self.observing += 1
            try:
                with self.in_context(ctx), self.obs.watching(log):
                    run.broke = self._sweep_iteration(s, env, after_break, start)
                after_break = after_break or run.broke
            finally:
                self.observing -= 1
                self.iteration_born = saved_born
            done += 1
            last = "run"
            if self.outside_writes != writes:
                reuse = False
            else:
                run.observed = {name for name, v in values.items()
                                if v is _NOT_CONST or (id(s), name) in log}
                # Where a repeat of it ends: the same, but for values made of its own bindings
                # (unknown there: the repeat's own were never made).
                run.outgoing = {name: UNKNOWN if sweep_reuse.mentions_swept(env.vars[name], id(s))
                                else env.vars[name] for name in assigned if name in env.vars}
                self._iteration_left(run, before)
                runs.append(run)
        if last == "cut":
            for name in assigned:
                if name in env.vars:
                    env.vars[name] = UNKNOWN
        if last in ("cut", "repeat"):
            self.assign(s.target, items[order[-1]], env, None)
        if first_exit is not None:
            # The loop may have ended at a `break` before the iterations that followed it (run for
            # their findings): after it, a name they bind is what it was there or after them.
            for name in sweep_reuse.assigned_names(s.body) | set(_target_names(s.target)):
                before, after = first_exit.get(name), env.vars.get(name)
                env.vars[name] = join(before, after) if before is not None and after is not None \
                    else UNKNOWN
        self.sweep_checked.append((line, done, len(items)))
        if done == len(items) and self.sweep_depth == 0:
            del self.outside_written[written:]  # (every combination ran: nothing to forget)
        if done < len(items):
            # The combinations left out would have run after the ones checked: what those wrote
            # to objects made before them (a list of results, a counter) is not known now.
            mutation.forget_writes(self, written)
            msg = (f"checked {done} of {len(items)} combinations of this sweep; the analysis budget "
                   f"left out the others")
            logs.logger().info("line %d: %s", line + 1, msg)
            self.notes.append((span, msg))
        self.loop_else(s, env)

    def _exits_iteration(self, s: ast.For, env: Env, after_break: bool) -> tuple[bool, bool]:
        """Run one iteration of an unrolled loop whose body may leave it: whether every path
        left the iteration (break/continue), and whether a `break` may have run. Uncertain once
        an earlier iteration may have left the loop (`after_break`)."""
        loop = _LoopExits(len(self.stack))
        self.loops.append(loop)
        try:
            with self.uncertain(after_break):
                left = self.run_path(lambda: self.exec_block(s.body, env)) == "loop"
        finally:
            self.loops.pop()
        return left, loop.broke

    def _sweep_iteration(self, s: ast.For, env: Env, after_break: bool, start: int) -> bool:
        """Run one iteration of a sweep; True if it may have left the loop (`break`).

        The first iteration runs whenever the loop does; a later one is uncertain only once an
        earlier one may have left the loop (`after_break`; a `return` marks the function's frame).
        Inside the body, what follows a `continue` or `break` taken on some path is uncertain,
        like what follows a `return` (see `run_path`)."""
        self.sweep_depth += 1
        loop = _LoopExits(len(self.stack))
        self.loops.append(loop)
        try:
            with self.uncertain(after_break):
                self.run_path(lambda: self.exec_block(s.body, env))
        finally:
            self.loops.pop()
            self.sweep_depth -= 1
        if self.sweep_depth == 0:
            self.sweep_steps += self.steps - start
        return loop.broke

    def _watch_values(self, s: ast.For, names: list[str], env: Env) -> None:
        """Before an iteration runs: each constant the loop binds (and each constant carried
        from the previous iteration) becomes a `Swept` one that reports when it is read."""
        for key in names:
            name = _carried_name(key)
            v = env.vars.get(name)
            if isinstance(v, Const):
                tags = frozenset({(id(s), key)}) | (v.tags if isinstance(v, Swept) else frozenset())
                env.vars[name] = Swept(raw(v), tags, self.obs)

    def sweep_state(self, carried: frozenset[str], env: Env,
                    after_break: bool) -> tuple[dict[str, Any], tuple]:
        """What an iteration starts from besides its own values: the path facts, and the values
        of the carried names (the caller compares them with observation paused). A carried
        constant is compared like a loop value, only if the iteration reads it (`best = 0.0`
        before the loop, unknown after the first timing): it is returned with the values."""
        kept = []
        consts: dict[str, Any] = {}
        for name in sorted(carried):
            v = env.lookup(name)
            if isinstance(v, Const) and name in env.vars:
                consts[_CARRIED + name] = raw(v)
            else:
                kept.append(v)
        return consts, (tuple(kept), self.certain, after_break,
                        tuple(f.maybe_returned for f in self.stack),
                        tuple(scope.tripped for scope in self.handlers), self.expecting_error,
                        self.memo_state())

    def _iteration_marks(self) -> tuple[dict[int, int], dict[int, set]]:
        return ({id(f): len(f.contexts) for f in self.findings},
                {k: set(v) for k, v in self.ctx_entered.items()})

    def _iteration_left(self, run: "sweep_reuse.IterationRun", before: tuple) -> None:
        """The contexts the iteration just run added to findings and to entered functions."""
        counts, entered = before
        for f in self.findings:
            new = f.contexts[counts.get(id(f), 0):]
            if new:
                run.findings.append((f, list(new)))
        for node, ctxs in self.ctx_entered.items():
            new_ctxs = ctxs - entered.get(node, set())
            if new_ctxs:
                run.entered.append((node, new_ctxs))

    def _repeat_iteration(self, run: "sweep_reuse.IterationRun", ctx: Context) -> None:
        """A combination that repeats `run`: its context goes where run's went."""
        old, new = run.ctx.bindings, ctx.bindings
        for f, ctxs in run.findings:
            for c in ctxs:
                c2 = sweep_reuse.rebind(c, old, new)
                if c2 not in f.contexts:
                    f.contexts.append(c2)
        for node, ctxs in run.entered:
            target = self.ctx_entered.setdefault(node, set())
            for c in ctxs:
                target.add(sweep_reuse.rebind(c, old, new))

    def sweep_spent(self) -> int:
        return self.sweep_steps + (self.steps - self.sweep_start if self.sweep_depth else 0)

    def loop(self, env: Env, target: ast.expr | None, elem: Value, body: list[ast.stmt],
             certain: bool) -> None:
        """A loop body that runs an unknown number of times: reach a joined state, then record."""
        ended = False
        if self.silent:
            # Already in a pass that only computes joined state: one pass is enough (this keeps
            # nested loops linear instead of doubling the work at every level).
            with self.uncertain():
                e1 = env.copy()
                if target is not None:
                    self.assign(target, elem, e1, None)
                ended = self.run_path(lambda: self.exec_block(body, e1))
            self.merge_into(env, [env.copy(), e1])
            return
        with self.quiet(), self.uncertain():
            e1 = env.copy()
            if target is not None:
                self.assign(target, elem, e1, None)
            ended = self.run_path(lambda: self.exec_block(body, e1))
            joined = env.copy()
            self.merge_into(joined, [env, e1])
        with self.uncertain(not certain or _breaks(body)):
            e2 = joined.copy()
            if target is not None:
                self.assign(target, elem, e2, None)
            ended = self.run_path(lambda: self.exec_block(body, e2)) or ended
        self.merge_into(env, [env.copy(), e2] if not certain else [e2])

    def iter_items(self, v: Value) -> list[Value] | None:
        if isinstance(v, generators.GeneratorVal):
            items = generators.consume(self, v)
            return list(items) if items is not None else None
        if isinstance(v, TupleVal):
            return list(v.items)
        if isinstance(v, Const) and isinstance(v.value, (range, tuple, list, str)) and len(v.value) <= MAX_UNROLL:
            return [Const(x) for x in v.value]
        if isinstance(v, DictVal):
            return [Const(k) for k, _ in v.items]
        if isinstance(v, SetVal) and len(v.items) <= 1:
            return list(v.items)  # (two or more: in an order the interpreter does not know)
        if isinstance(v, ClassVal) and v.kind in classes.ENUMS:
            return list(classes.members(v))  # `for mode in Mode:` its members, in order
        if isinstance(v, InstanceVal):
            it = operators.iterated(self, v)  # the class's `__iter__`
            return self.iter_items(it) if it is not None else None
        return None

    def iter_element(self, v: Value, items: list[Value] | None) -> Value:
        if items:
            out = items[0]
            for i in items[1:]:
                out = join(out, i)
            return out
        if isinstance(v, Const) and isinstance(v.value, range):
            return UNKNOWN
        if isinstance(v, ArrayVal) and v.shape:
            return ArrayVal(v.shape[1:], v.dtype)
        return UNKNOWN

    def known_nonempty(self, v: Value) -> bool:
        return isinstance(v, Const) and isinstance(v.value, range) and len(v.value) > 0

    def exec_While(self, s: ast.While, env: Env) -> None:
        self.loops.append(None)  # its `break`/`continue` are its own
        try:
            self._exec_while(s, env)
        finally:
            self.loops.pop()

    def _exec_while(self, s: ast.While, env: Env) -> None:
        test = self.eval(s.test, env)
        if not leaves_loop(s.body):
            # A short loop whose test is known each time is run as Python runs it (like a short
            # known `for`): each iteration sees its own values (`while rows > 0: rows //= 2`;
            # a heuristic's `while stages > 1: ... if fits: return config`).
            for _ in range(8):
                if not (isinstance(test, Const) and isinstance(test.value, (bool, int))):
                    break
                if not test.value:
                    self.exec_block(s.orelse, env)
                    return
                self.exec_block(s.body, env)
                if self._returned():
                    return
                test = self.eval(s.test, env)
        self.loop(env, None, UNKNOWN, s.body, certain=False)
        self.loop_else(s, env)


def _stored_names(body: list[ast.stmt]) -> set[str]:
    """The names a loop body binds (not inside nested functions or classes)."""
    out: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _optimistic_handlers(body: list[ast.stmt]) -> bool:
    """A `try` in the loop's own body (not in a nested function) other than a `next`-only one:
    its handlers are assumed not to run unless a finding says the body raised (interp_try), so
    how they leave the loop is not followed exactly (an `except IndexError: break` would be
    missed): such a loop is not unrolled. Kept on the body's first statement (as
    block_exits keeps what it finds): a loop run once per iteration of an enclosing one walks
    its body once."""
    from wgmma_lsp.interpret.interp_try import _next_only

    if not body:
        return False
    known = getattr(body[0], "_wgmma_optimistic", None)
    if known is not None:
        return known
    found = False
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Try, ast.TryStar)) and not (isinstance(n, ast.Try) and _next_only(n)):
            found = True
            break
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.expr)):
            todo.extend(ast.iter_child_nodes(n))
    body[0]._wgmma_optimistic = found  # type: ignore[attr-defined]
    return found


@dataclass
class _LoopExits:
    """A sweep iteration being run: how its body may leave it."""

    depth: int  # the call depth its own statements run at (nested calls cannot leave it)
    stopped: bool = False  # this path left the iteration: the rest of the body does not run on it
    maybe_stopped: bool = False  # some path left it: what follows in the body may not run
    broke: bool = False  # a `break` ran on some path: the later iterations may not run
    uncertain_born: int = 0  # when `maybe_stopped` became true (see interp_base.Frame)
    stops: int = 0  # how many paths left it so far (see interp_base.Frame.ends)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "maybe_stopped":
            mark_uncertain(self, bool(value))
        object.__setattr__(self, name, value)


_NOT_CONST = object()  # a sweep binding that is not a constant: always counts as observed
_CARRIED = "<carried> "  # the key of a carried name among a sweep iteration's values


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _carried_name(key: str) -> str:
    return key[len(_CARRIED):] if key.startswith(_CARRIED) else key


def _item_values(target: ast.expr, item: Value) -> dict[str, Any]:
    """What a loop target's names are bound to by one item: the Python value of each
    constant, `_NOT_CONST` for anything else."""
    if isinstance(target, ast.Tuple) and isinstance(item, TupleVal) \
            and len(item.items) == len(target.elts) \
            and all(isinstance(t, ast.Name) for t in target.elts):  # the usual flat tuple
        return {t.id: raw(v) if isinstance(v, Const) else _NOT_CONST
                for t, v in zip(target.elts, item.items)}
    out: dict[str, Any] = {}
    if isinstance(target, ast.Name):
        out[target.id] = raw(item) if isinstance(item, Const) else _NOT_CONST
    elif isinstance(target, (ast.Tuple, ast.List)):
        parts = item.items if isinstance(item, TupleVal) and len(item.items) == len(target.elts) \
            else [UNKNOWN] * len(target.elts)
        for t, v in zip(target.elts, parts):
            out.update(_item_values(t, v))
    return out


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_names_only(e) for e in target.elts)


def _bindings(target: ast.expr, value: Value) -> list[tuple[str, str | None]]:
    """`tile_m, tile_n = (128, 64)` as [("tile_m", "128"), ("tile_n", "64")]."""
    if isinstance(target, ast.Name):
        return [(target.id, binding_text(value))]
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, TupleVal) and len(value.items) == len(target.elts):
            return [b for t, v in zip(target.elts, value.items) for b in _bindings(t, v)]
        return []
    return []

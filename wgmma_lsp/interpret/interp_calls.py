"""Calls: user functions (binding, memo, replay, contexts), methods, classes and models."""

from __future__ import annotations

import ast
from contextlib import contextmanager

from wgmma_lsp.entry.context import Context
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import (axis_env, classes, followon, forced_interpret, foreign_memo, generators,
                                 hover_memo, mutation, path_equalities, silent_memo)
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.interp_base import MAX_DEPTH, Frame, _origin_of, _value_kind, is_driver
from wgmma_lsp.interpret.memo import MemoEntry, call_key, cut as memo_cut, replayed as memo_replayed
from wgmma_lsp.interpret.replay_objects import held, holds_shared
from wgmma_lsp.interpret.origin import ModuleOrigin
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ApiVal,
    BoundMethod,
    ClassVal,
    Const,
    DeclaredOpaque,
    DictVal,
    ForeignName,
    FuncVal,
    InstanceVal,
    Opaque,
    PartialVal,
    SymInt,
    TupleVal,
    Unknown,
    Value,
    Wrapped,
    join,
)
from wgmma_lsp.models import jax_api

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Iterator


#: The methods of Python's mutable containers, called through their class (`list.sort(xs)`).
_CONTAINER_METHODS = ("builtins.list.", "builtins.dict.", "builtins.set.")


class CallsMixin:
    """Calls: user functions (binding, memo, replay, contexts), methods, classes and models."""

    def call_value(self, func: Value, call: Call) -> Value:
        """Call any abstract callable."""
        self.steps += 1  # (interp.tick, inlined)
        if self.steps > self._check_at:
            self.checkpoint()
        if isinstance(func, FuncVal):
            return self.call_user(func, call)
        if self.eager_root and self.api_call is None and not isinstance(func, _PYTHON_CALLS):
            name = _api_call_name(func)
            if name not in followon.EAGER_CALLS:  # (what a lowering error ends: followon.py)
                return followon.at_root(self, name, lambda: self._call_other(func, call))
        return self._call_other(func, call)

    def _call_other(self, func: Value, call: Call) -> Value:
        """`call_value` of anything but a user function."""
        if isinstance(func, PartialVal):
            args = list(func.args) + call.args
            nodes = [None] * len(func.args) + list(call.arg_nodes)
            kwargs = {**func.kwargs, **call.kwargs}
            return self.call_value(func.func, Call(self, call.node, args, kwargs, nodes,
                                                   dict(call.kw_nodes), call.env, call.complete))
        if isinstance(func, ApiVal):
            if not jax_api.call_binds(call, func.name):
                return UNKNOWN  # the installed JAX's Python raises a TypeError here
            model = self.models.get(func.name)
            if model is not None:
                return model(call)
            if func.name.startswith(_CONTAINER_METHODS):  # `list.sort(xs)`, `dict.clear(d)`: a
                for v in call.args[:1]:  # method of its first argument, which it may change
                    if mutation.is_mutable(v):
                        mutation.spoil(self, v)  # type: ignore[arg-type]
            return self.unknown_call(call)
        if isinstance(func, BoundMethod):
            return self.call_method(func, call)
        if isinstance(func, Wrapped):
            model = self.models.get(func.api + "()")
            if model is not None:
                call.wrapped = func
                return model(call)
            return self.unknown_call(call)
        if isinstance(func, ClassVal):
            return self.instantiate(func, call)
        if isinstance(func, InstanceVal):  # `obj(...)`: its class's `__call__`, bound to it
            method = classes.instance_attr(self, func, "__call__")  # type: ignore[arg-type]
            if isinstance(method, FuncVal):
                return self.call_user(method, call)
        if isinstance(func, ForeignName) and (model := self.models.get(func.name)) is not None:
            return model(call)  # a standard-library or third-party callable a model follows
        model = self.models.get(f"{_value_kind(func)}()")  # e.g. `jnp.int32(x)`: "dtype()"
        if model is not None:
            call.wrapped = func
            return model(call)
        if isinstance(func, (Unknown, Opaque)):
            # A function nothing is known of (not an API: those do not change their arguments)
            # may change the lists and dicts it is given: they are not known after it.
            for v in list(call.args) + list(call.kwargs.values()):
                if mutation.is_mutable(v):
                    mutation.spoil(self, v)  # type: ignore[arg-type]
        return self.unknown_call(call)

    def unknown_call(self, call: Call) -> Value:
        """An unmodelled callable: user functions passed to it still get analysed, but it may
        never call them, so what they do is not certain."""
        from wgmma_lsp.hazards.log import unfollowed_call

        values = list(call.args) + list(call.kwargs.values())  # (neither of the two changes it)
        unfollowed_call(self, values)
        generators.given_away(self, values)  # it may iterate them
        with self.uncertain():
            for v in values:
                if isinstance(v, FuncVal) and id(v.node) not in self.entered:
                    self.generic_call(v)
        return UNKNOWN

    def _text_may_yield(self, func: FuncVal) -> bool:
        """Whether the text of the module a function was defined in spells `yield` (if not, it
        is no generator and its body is not walked to find out); True when that text is not
        at hand."""
        env = func.closure.module_env()
        if env is self.module_env:
            return self._home_state[0].may_yield  # (this interpreter's own text: `self.lines` is
            # the text of the module running now)
        origin = env.origin
        return origin.lines.may_yield if origin is not None else True

    def memo_state(self) -> tuple:
        """What of the interpreter's state a memoised call's result and findings may depend on:
        the running kernel's, whether a `jax.vjp` collects custom_vjp calls, and whether nests
        of short loops are unrolled in full (a capped run's values are less precise), and whether
        interpret mode is forced (a forced kernel is never lowered: forced_interpret.py)."""
        return (*self.kernel.memo_key(), bool(self.vjp_frames), self.unroll_cap is not None,
                axis_env.current(), forced_interpret.current())

    def not_replayable(self) -> None:
        """What the running calls do now is not theirs alone (a custom_vjp call collected by a
        `jax.vjp` outside them): none of them is memoised."""
        for entry in self.captures:
            entry.writes_outside = True

    def call_traced(self, func: Value, args: list[Value], call: Call) -> Value:
        """A function JAX traces for sure (a cond branch, a loop or pipeline body)."""
        return self.call_value(func, Call(self, call.node, args, {}, [None] * len(args), {}, call.env))

    def call_method(self, m: BoundMethod, call: Call) -> Value:
        kind = _value_kind(m.obj)
        model = self.methods.get(f"{kind}.{m.name}")
        if model is None:
            return UNKNOWN
        return model(m.obj, call)

    def generic_call(self, func: FuncVal) -> Value:
        """Analyse a function with nothing known about its arguments."""
        return self.call_user(func, Call(self, None, [], {}, generic=True))

    def call_user(self, func: FuncVal, call: Call) -> Value:
        """Call a user function; module-level functions are analysed once per distinct
        arguments once the module has run (see `memo`)."""
        if call.generic and axis_env.current() is not None:
            with axis_env.bound(None):  # its callers are not known, nor what they bind
                return self.call_user(func, call)
        hooks = self.program_hooks  # a test context (entry/op_dispatch.py)
        if hooks is not None:
            if self.eager_root and self.api_call is None:  # an op's call from untraced code (followon.OP_CALL)
                dispatched = followon.at_root(self, followon.OP_CALL, lambda: hooks.dispatch(func, call))
            else:
                dispatched = hooks.dispatch(func, call)
            if dispatched is not None:
                return dispatched
        if not call.generic:
            node = func.node
            gen = getattr(node, "_wgmma_generator", None)  # (is_generator_function's own cache)
            if gen is None:
                gen = self._text_may_yield(func) and generators.is_generator_function(node)
            if gen:
                return generators.make(self, func, call)  # its body runs when it is iterated
        if self.return_log is not None and id(func.node) in self.return_log:
            return self._call_user(func, call)  # (its returns are read: it runs, not replayed)
        key = None
        if self.memo_enabled and not self.hover_only and func.closure is self.module_env:
            if self.observing:
                with self.obs.unobserved():  # a key is books: equal keys give equal runs either way
                    key = call_key(func, call.args, call.kwargs, call.generic, call.complete,
                                   self.memo_state())
                    hit = self.memo.get(key) if key is not None else None
            else:
                key = call_key(func, call.args, call.kwargs, call.generic, call.complete, self.memo_state())
                hit = self.memo.get(key) if key is not None else None
        if key is None:
            if self.memo_enabled and not self.hover_only and foreign_memo.applies(self, func):
                return foreign_memo.call(self, func, call)  # another module's function
            if self.hover_only and self.memo_enabled and hover_memo.applies(self, func):
                return hover_memo.call(self, func, call)  # the hover pass' own memo
            return self._call_user(func, call)
        if hit is not None and hit.replays_here(self) and hit.stands_for(func, call):
            self.steps += hit.steps  # (0 unless it launches: a budget is spent as if it ran)
            return self.memo_replay(hit, func, call)
        if self.silent:
            return silent_memo.call(self, func, call)  # (a silent run is not stored here)
        entry = MemoEntry(outer_certain=self.certain and not any(f.maybe_returned for f in self.stack),
                          ran_certain=self.certain)
        start = self.steps
        result = self.memo_run(entry, func, call)
        if entry.launches:
            entry.steps = self.steps - start
        if not entry.writes_outside:
            self.memo[key] = entry
        return result

    def memo_replay(self, hit: MemoEntry, func: FuncVal, call: Call) -> Value:
        """A memoised call's result and findings, for this call instead of running it."""
        if self.observing:
            self.obs.add(hit.observed)  # what the run it stands for looked at
        memo_replayed(self, hit)
        self._replay(hit, func, call)
        if hit.raised and self.stack:
            self.stack[-1].returned = True  # the call raises every time: nothing after it runs
        # (lists, dicts and instances the call made are this call's own, as in CPython)
        return hit.result_for_replay()

    def memo_run(self, entry: MemoEntry, func: FuncVal, call: Call) -> Value | None:
        """Run the call, `entry` capturing what a replay needs (its result, findings, what it
        entered and observed, whether it raised); the call's result (the caller's own objects:
        the entry keeps a copy of those the run made, `MemoEntry.planned`)."""
        entry.started = self.report_serial
        given = held(func, call.args, call.kwargs)  # (walked once: also the replay's plan's)
        if holds_shared(given):
            # Another module's objects change per analysis outside them (`shared_writes`,
            # `spoiled_shared`), where the key does not look: replayed while nothing older
            # than the call was written since, as what a run reads through a global name.
            entry.reads_outside = True
        self.captures.append(entry)
        depth = len(self.stack)
        deepest, self.max_stack = self.max_stack, depth
        try:
            # Inside a sweep iteration, what the body reads of the swept values is kept for
            # replays (outside one, no value read can be a binding of a running iteration).
            if self.observing:
                with self.obs.watching(entry.observed):
                    entry.result = self._call_user(func, call)
            else:
                entry.result = self._call_user(func, call)
        finally:
            self.captures.pop()
            entry.reach = self.max_stack - depth
            if deepest > self.max_stack:
                self.max_stack = deepest
        entry.raised = self.raised_out
        entry.write_serial = self.write_serial
        result = entry.result
        if not entry.writes_outside:  # (else not stored)
            entry.planned(given)
        return result

    def _replay(self, hit: MemoEntry, func: FuncVal, call: Call) -> None:
        ctx = self.call_context(func, call)
        certain = self.certain and not any(f.maybe_returned for f in self.stack) \
            and not any(lp.maybe_stopped for lp in self.loops if lp is not None)
        captures = self.captures
        for outer in captures:  # an enclosing call being memoised replays this one too
            outer.entered |= hit.entered
        if self.silent:
            for outer in captures:
                outer.findings.extend((f, c) for f, c in hit.findings
                                      if (at := followon.ended_at(self, f.rule, ctx)) is None
                                      or followon.keeps(outer, at))
            return
        self.entered.add(id(func.node))
        ctx_entered = self.ctx_entered
        for node in (*hit.entered, id(func.node)):  # (a set made only where none is)
            contexts = ctx_entered.get(node)
            if contexts is None:
                contexts = ctx_entered[node] = set()
            contexts.add(ctx)
        lowered = False
        for f, was_certain in hit.findings:
            # As `report` does with each: JAX's run may have stopped before it (one of the call's
            # own findings may end it: interpret/followon.py).
            self.report_serial += 1
            ended = followon.ended_at(self, f.rule, ctx)
            for outer in captures:
                if ended is None or followon.keeps(outer, ended):
                    outer.findings.append((f, was_certain))
            if ended is not None:
                continue
            # A handler here that expects the error takes it (asked once: a finding of the same
            # key has the same rule and message).
            if self.expected_by_handler(f.rule, f.message):
                continue
            if f.key not in self._finding_keys:  # captured where a handler expected it, or
                self._finding_keys.add(f.key)  # after JAX's run stopped: in no context yet
                self.findings.append(f)
                f.contexts.clear()
                f.certain = False
            else:  # the one finding of that key (perhaps first reported from another call)
                f = next(g for g in self.findings if g.key == f.key)
            caught = self.may_be_caught(f.rule, f.message)
            sure = certain and not caught and was_certain and hit.outer_certain and not f.condition
            self.count_report(f, ctx, sure)
            if followon.raised(self, f.rule, f.message, ctx, sure, caught, f.condition,
                               inside=was_certain and hit.outer_certain) \
                    and hit.lowering_end and f.rule.installed_stage() == "lower":
                lowered = True
        if lowered:
            followon.replayed_lowering(self, ctx)

    def _call_user(self, func: FuncVal, call: Call) -> Value:
        node = func.node
        # Recursion is not followed: a call of the very function running (same code, same
        # closure). The same code closed over another scope is another function (a wrapper
        # made twice: `vmap(vmap_split(f))` runs one `vmapped` inside the other).
        stack = self.stack
        depth = len(stack)
        if depth >= MAX_DEPTH:
            memo_cut(self)
            return UNKNOWN
        if depth > self.max_stack:
            self.max_stack = depth
        closure = func.closure
        for f in stack:  # (a loop, not `any()` over a generator: this runs for every call)
            running = f.func
            if running is not None and running.node is node and running.closure is closure:
                memo_cut(self)
                return UNKNOWN
        if not self.silent:  # a pass that only computes state neither records nor reports
            self.entered.add(id(node))
        saved_ctx = self.ctx
        self.ctx = self.call_context(func, call)
        entered_in = self.ctx_entered.get(id(node))  # (setdefault would make a set every call)
        if entered_in is None:
            entered_in = self.ctx_entered[id(node)] = set()
        entered_in.add(self.ctx)
        for entry in self.captures:
            entry.entered.add(id(node))
        env = Env(func.closure)
        frame = Frame(func, env)
        self.stack.append(frame)
        saved_certain = self.certain
        ctx_pushed = False
        if call.node is not None:
            self.context.append(f"{func.name}() called at line {call.line + 1}")
            ctx_pushed = True
        # The parameters are recorded in the callee's module (a function of the analysed file
        # called back from another module records its parameters; one of another module does not)
        saved_where = self.enter_module(_origin_of(func.closure), call)
        try:
            self.bind_params(func, call, env)
            if isinstance(node, ast.Lambda):
                result = self.eval(node.body, env)
                return result
            self.exec_block(node.body, env)
        finally:
            self.stack.pop()
            self.certain = saved_certain
            self.ctx = saved_ctx
            if ctx_pushed:
                self.context.pop()
            if saved_where is not None:
                self.leave_module(saved_where)
        self.raised_out = False
        if frame.returned and not frame.returns and not call.generic and always_raises_out(node):
            # Every path of the body raised (`raise`, a failing `assert`, a call that raises):
            # in the caller, as after a `raise` there, nothing after this call runs.
            self.raised_out = True
            if self.stack:
                self.stack[-1].returned = True
            return UNKNOWN
        if self.return_log is not None and id(node) in self.return_log:
            self.return_log[id(node)].extend(frame.returns)
        if not frame.returns:
            return Const(None)
        result = frame.returns[0]
        if frame.returns_assumed:  # some paths proved sizes equal (interpret/path_equalities.py)
            return path_equalities.join_all(frame.returns, [frame.returns_assumed.get(i, ())
                                                            for i in range(len(frame.returns))])
        for r in frame.returns[1:]:
            result = join(result, r)
        return result

    def enter_module(self, origin: ModuleOrigin | None, call: Call) -> tuple | None:
        """Switch to the module a called function belongs to; the state to restore, or None."""
        if origin is self.where:
            return None
        saved = (self.where, self.lines, self.path, self.volatile, self.entry_span)
        if self.where is None and origin is not None:
            # Leaving the analysed document: its findings will sit at this call.
            self.entry_span = self.span(call.node) if call.node is not None else None
        elif origin is None:
            self.entry_span = None
        home_lines, home_path, home_volatile = self._home_state
        self.where = origin
        if origin is None or origin is self.home:
            self.lines, self.path, self.volatile = home_lines, home_path, home_volatile
        else:
            self.lines, self.path, self.volatile = origin.lines, origin.path, origin.volatile
        return saved

    def leave_module(self, saved: tuple) -> None:
        self.where, self.lines, self.path, self.volatile, self.entry_span = saved

    def caller_name(self) -> str:
        frame = next((f for f in reversed(self.stack) if f.func is not None), None)
        if frame is not None and frame.func is not None:
            name = f"{frame.func.name}()"
            if self.ctx is not None and self.ctx.origin.endswith(f".{name}") and frame.env is not None:
                # A test method its runner runs, in its class's context: named by that class.
                node = frame.func.node
                params = [] if isinstance(node, ast.Lambda) else node.args.posonlyargs + node.args.args
                owner = getattr(frame.env.vars.get(params[0].arg) if params else None, "cls", None)
                if owner is not None and self.ctx.origin == f"{owner.name}.{name}":
                    return self.ctx.origin
            return name
        return self.ctx.origin if self.ctx is not None else "module code"  # the entry's own code

    def call_context(self, func: FuncVal, call: Call) -> Context | None:
        """The context a call runs in: a call made from module code starts one; the first call
        made from an entry point's own code names that call site (`main()` and the like are
        drivers, not sites)."""
        if call.generic or call.node is None or self.silent:
            return self.ctx
        ctx = self.ctx
        if ctx is None:
            if self.stack:
                return None
            return Context("module code", call.line, span=self.span(call.node), open=False)
        if ctx.open and not is_driver(func.name):
            return ctx.at_call(self.caller_name(), call.line, self.span(call.node))
        return ctx

    @contextmanager
    def in_context(self, ctx: Context | None) -> Iterator[None]:
        """Run in `ctx`, a run of its own (interpret/followon.py: what ended another run has
        not ended it)."""
        saved = self.ctx
        self.ctx = ctx
        try:
            with followon.RunScope(self):
                yield
        finally:
            self.ctx = saved

    def bind_params(self, func: FuncVal, call: Call, env: Env) -> None:
        a = func.node.args
        positional = list(a.posonlyargs) + list(a.args)
        args = list(call.args)
        if func.bound_self is not None:
            args.insert(0, func.bound_self)
        generic = call.generic
        defaults = list(func.defaults)
        first_default = len(positional) - len(defaults)
        kwargs = dict(call.kwargs)
        recording = not self.silent and self.where is None  # (record's own test, once)
        for i, p in enumerate(positional):
            if i < len(args):
                v = args[i]
            elif p.arg in kwargs:
                v = kwargs.pop(p.arg)
            elif i >= first_default and (call.complete or generic):
                v = self._default(call, defaults[i - first_default])  # factories' defaults count
            else:
                v = _unbound_param(p)
            if p.annotation is not None:  # (`_declared`'s own first test, before the call)
                v = self._declared(func, p, v)
            env.vars[p.arg] = v
            if recording:
                self.record(p, v, "name", p.arg)
        if a.vararg is not None:
            rest = args[len(positional):]
            env.vars[a.vararg.arg] = TupleVal(tuple(rest)) if call.complete and not generic else UNKNOWN
            self.record(a.vararg, env.vars[a.vararg.arg], "name", a.vararg.arg)
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                v = kwargs.pop(p.arg)
            elif d is not None and (call.complete or generic):
                v = self._default(call, func.kw_defaults.get(p.arg, UNKNOWN))
            else:
                v = _unbound_param(p)
            v = self._declared(func, p, v)
            env.vars[p.arg] = v
            self.record(p, v, "name", p.arg)
        if a.kwarg is not None:
            env.vars[a.kwarg.arg] = (DictVal(tuple(kwargs.items())) if call.complete and not generic
                                     else UNKNOWN)
            self.record(a.kwarg, env.vars[a.kwarg.arg], "name", a.kwarg.arg)

    def _declared(self, func: FuncVal, p: ast.arg, v: Value) -> Value:
        """A parameter nothing is known about, as its jaxtyping annotation declares it
        (`q: Float[Array, "T H D"]`: array_annotations.py): when no call gives it, and when
        the caller's value is unknown but the function checks its arguments (`@jaxtyped`)."""
        if p.annotation is None or not (type(v) is Opaque or type(v) is Unknown):
            return v
        if type(v) is Opaque and (cls := classes.annotated_class(p.annotation, func.closure)) is not None:
            return DeclaredOpaque(v.name, cls=cls)  # `config: Config`: its int fields are ints
        if type(v) is Unknown and not is_jaxtyped(func.node):
            return v
        from wgmma_lsp.interpret import array_annotations  # (jaxtyping annotations: few files have them)

        declared = array_annotations.declared_array(p.annotation, p.arg, func.closure)
        return v if declared is None else declared

    def _default(self, call: Call, default: Value) -> Value:
        """A parameter's default. In the hover pass's second round (`flip_flags`: a function
        once more with nothing known, for lines no context reached) a flag's default
        (`transpose_rhs=False`) is flipped, so the other branch's lines get hovers too.
        Diagnostics never come from the hover pass."""
        default = mutation.live(self, default)  # a mutable default is one object for all calls
        if self.flip_flags and self.hover_only and call.generic and isinstance(default, Const) \
                and isinstance(default.value, bool):
            return Const(not default.value)
        return default

    def instantiate(self, cls: ClassVal, call: Call) -> Value:
        return classes.instantiate(self, cls, call)  # type: ignore[arg-type]


def _unbound_param(p: ast.arg) -> Value:
    """A parameter no call gives a value: an unknown known by its name, or, annotated `int`
    (`block_k: int`), an int known by its name (it takes part in arithmetic as a Python int)."""
    if isinstance(p.annotation, ast.Name) and p.annotation.id == "int":
        return SymInt(D.Sym.var(p.arg))
    return Opaque(p.arg)


def is_jaxtyped(node: ast.AST) -> bool:
    """Whether a function is decorated `@jaxtyped` / `@jaxtyping.jaxtyped(typechecker=...)`
    (any module's `jaxtyped`: tokamax re-exports one with its type checker bound)."""
    for d in getattr(node, "decorator_list", ()):
        head = d.func if isinstance(d, ast.Call) else d
        name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", None)
        if name == "jaxtyped":
            return True
    return False


def always_raises_out(node: ast.AST) -> bool:
    """Whether a body that ended on every path without `return` makes its call raise: a plain
    function (a generator's or coroutine's call returns an object without running the body).
    Only asked when a body raised on every path, which is rare: not cached."""
    if not isinstance(node, ast.FunctionDef):
        return False
    stack: list[ast.AST] = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return True


#: What `call_value` calls as Python does, not through a model.
_PYTHON_CALLS = (PartialVal, ClassVal, InstanceVal)


def _api_call_name(func: Value) -> str:
    """The model a call of `func` runs, as `interp.api_call` names it (followon.LOWERING_CALLS)."""
    if isinstance(func, ApiVal):
        return func.name
    if isinstance(func, Wrapped):
        return func.api + "()"
    if isinstance(func, BoundMethod):
        return f"{_value_kind(func.obj)}.{func.name}"
    return type(func).__name__

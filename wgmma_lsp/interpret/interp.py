"""The abstract interpreter: runs module code and kernel bodies over abstract values.

It follows calls into user functions (with their closures, defaults, decorators and
`functools.partial`), records the value of every expression it visits (for hover), and lets
the models of the JAX API report findings. Control flow it cannot decide is explored on
every path; a fact that differs between paths is joined away, and findings made on a path
that may not run are marked uncertain.
"""

from __future__ import annotations

import ast
import operator
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from wgmma_lsp.analysis import ValueRecord
from wgmma_lsp.entry.context import Context, binding_text
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes
from wgmma_lsp.interpret import resolve
from wgmma_lsp.interpret import const_fold, incomplete
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.models import jax_api, registry
from wgmma_lsp.models.arrays import array_binop, array_compare
from wgmma_lsp.models.python import BUILTINS
from wgmma_lsp.models.registry import ATTRIBUTES, CONSTANTS, GETITEM, SETITEM

registry.load_all()
from wgmma_lsp.interpret.dtypes import SymDType
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.machine_guards import assume_machine_guard
from wgmma_lsp.interpret import sweep_reuse
from wgmma_lsp.interpret.memo import MemoEntry, call_key
from wgmma_lsp.interpret.observe import Observations, Swept, raw
from wgmma_lsp.interpret.origin import ForeignSpan, Importer, ModuleOrigin, active_importer
from wgmma_lsp.interpret.values import (
    UNKNOWN, ApiVal, ArrayVal, BoundMethod, ClassVal, Const, DictVal, DTypeVal, FuncVal, InstanceVal,
    ModuleVal, Opaque, PartialVal, RefVal, SliceVal, SymInt, TupleVal, Unknown, UserModuleVal, Value,
    Wrapped, UNKNOWN_INT,
    as_dim, dim_value, is_int_like, is_unknown, join, next_born,
)
from wgmma_lsp.interpret.sweep_budget import sweep_steps
from wgmma_lsp.rules.base import Finding, Related, Rule
from wgmma_lsp.spans import LineIndex, Span

MAX_DEPTH = 24
MAX_STEPS = 400_000
MAX_RECORD_VALUES = 6
MAX_UNROLL = 64
DRIVER_NAMES = frozenset({"main", "<lambda>"})
_DRIVER_PREFIXES = ("main", "run", "bench", "tune", "example", "sweep")


def is_driver(name: str) -> bool:
    """A function that drives kernels (`main`, `_run_example`, `benchmark`): the calls it
    makes are the call sites contexts are named by, not the call of the driver itself."""
    return name in DRIVER_NAMES or name.lstrip("_").startswith(_DRIVER_PREFIXES)


CHECK_EVERY = 2048  # steps between checks for cancellation


class Budget(Exception):
    """The step budget ran out: the analysis stops with what it has."""


class Cancelled(Budget):
    """A newer version of the document arrived: this analysis is abandoned."""


# The cancellation event of the analysis running on this thread (set by the driver), for
# interpreters made along the way (the user's other modules) that are not given one.
CURRENT_CANCEL = threading.local()


@dataclass
class Frame:
    func: FuncVal | None
    returns: list[Value] = field(default_factory=list)
    returned: bool = False
    maybe_returned: bool = False  # returned (or raised) on some path already: the rest may not run


_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def release_scopes(scopes: set[Env]) -> None:
    """Empty the scopes an interpreter bound functions and classes in (it was dropped): the
    cycles scope -> function -> closure -> scope are broken, and reference counting frees the
    rest of the analysis (its syntax tree, values and records) right away."""
    for env in scopes:
        env.vars.clear()
        env.parent = None
    scopes.clear()


class Interpreter:
    def __init__(self, source: str, tree: ast.Module, lines: LineIndex, path: str | None = None,
                 origin: ModuleOrigin | None = None, importer: Importer | None = None,
                 cancel: threading.Event | None = None):
        self.source = source
        self.tree = tree
        self.lines = lines
        self.path = path
        # Which module's code runs now: None for the analysed document; a ModuleOrigin while a
        # function of another user module runs (its spans are ForeignSpans, nothing is recorded
        # for hovers, findings move to `entry_span`). `home` is the module this interpreter
        # analyses: an interpreter that only summarises another module (home set) reports nothing.
        self.home = origin
        self.where = origin
        self.entry_span: Span | None = None  # the call in the analysed document that led there
        self.importer = importer if importer is not None else active_importer()
        self.shared_writes: dict[int, dict[str, Value]] = {}  # see InstanceVal.shared
        self.records: dict[Span, ValueRecord] = {}
        self._records: dict[int, tuple] = {}  # id(node) -> (node, kind, name, values, contexts)
        self.findings: list[Finding] = []
        self._finding_keys: set[tuple] = set()
        self.module_env = Env(origin=origin)
        self.stack: list[Frame] = []
        self.certain = True
        self.silent = 0
        self.steps = 0
        self.step_limit = MAX_STEPS  # Budget past it (interpret/incomplete.py sets it per piece)
        if cancel is None:
            cancel = getattr(CURRENT_CANCEL, "event", None)
        self.cancel = cancel  # set from another thread: stop at the next checkpoint
        self._check_at = min(CHECK_EVERY, MAX_STEPS) if cancel is not None else MAX_STEPS
        self.entered: set[int] = set()  # id() of function nodes whose bodies ran
        self.defined: dict[int, FuncVal] = {}  # id() of def node -> last function value made
        self.escaped: set[int] = set()  # id() of def nodes returned to callers
        self.context: list[str] = []  # descriptions of the call sites that led here
        # The concrete context being analysed (an entry point, a sweep iteration), None when
        # nothing is known; which contexts entered each function (by id of its node); notes
        # about what the budget left out (span, message).
        self.ctx: Context | None = None
        self.ctx_entered: dict[int, set[Context | None]] = {}
        self.notes: list[tuple[Span, str]] = []
        self.incomplete: list = []  # analysis.Incomplete: where the analysis stopped short (WG904)
        self.sweep_steps = 0  # steps spent in sweep iterations
        self.sweep_depth = 0
        # Each sweep: (0-based line of its loop, combinations checked, combinations in all).
        self.sweep_checked: list[tuple[int, int, int]] = []
        # Open observation logs of sweep iterations (interpret/observe.py): while one is open,
        # reads that keep books are made unobserved. The serial number an object must be born
        # from to belong to the running iteration, and how many writes went to older objects.
        self.observing = 0
        self.obs = Observations()
        self.iteration_born = 0
        self.outside_writes = 0
        # The last pass: code the contexts reached, analysed with nothing known, only for the
        # hovers of lines no context reached (its findings belong to the contexts).
        self.hover_only = False
        self.flip_flags = False  # hover pass, second round: flags' defaults flipped
        self.expecting_error = 0  # inside `with pytest.raises(...)`: errors are expected there
        # Each enclosing `try`: the exception classes it catches (None: it may catch anything),
        # and whether an error it may catch was already found in its body (then the rest of
        # that body may not run).
        self.handlers: list[_TryScope] = []
        # The loops whose `break`/`continue` the interpreter follows (sweep iterations), innermost
        # last; None for a loop it runs another way (their exits are theirs).
        self.loops: list[_LoopExits | None] = []
        # Calls analysed once per distinct arguments (interpret/memo.py), after the module ran.
        self.memo_enabled = False
        self.memo: dict[Any, MemoEntry] = {}
        self.captures: list[MemoEntry] = []
        self.sweep_start = 0
        # Steps all configuration sweeps together may spend (interpret/sweep_budget.py): the
        # first case of a sweep always runs; the budget keeps the speed target.
        self.sweep_budget = sweep_steps(len(lines.lines), MAX_STEPS)
        # The lowering semantics of the kernel being interpreted ("lane", "warpgroup"), None when
        # unknown (no visible pallas_call/kernel, or an unknown JAX): lowering rules need it.
        self.lowering: str | None = None
        # The `pallas_call`/`plgpu.kernel` call being interpreted: kernel-level lowering errors
        # (no kernel frame in JAX's traceback) are blamed there.
        self.kernel_span: Span | None = None
        # Its thread axis (`plgpu.kernel(..., thread_name=...)`): None for single-threaded
        # kernels (pallas_call), "?" when unknown.
        self.kernel_wg_axis: str | None = "?"
        # id() of an API result -> (that result, the call that made it), for checks JAX makes
        # only when the result is used (a `plgpu.kernel(...)` decorator's keywords).
        self.made_by: dict[int, tuple[Value, Call]] = {}
        # Shared memory: the run_scoped scopes open in the kernel being interpreted, and what
        # each kernel call allocates (models/smem_budget.py), by the call's span.
        self.smem_scopes: list = []
        self.smem_usage: dict[Span, list] = {}
        # Names some function rebinds with `global`/`nonlocal`: their value at any point is unknown.
        # (skipped when the words are absent; `pl.get_global` has one: then statements only)
        self.volatile: set[str] = rebound_names(tree) \
            if "global" in source or "nonlocal" in source else set()
        self._span_cache: dict[int, Span] = {}
        # Scopes a function or class was bound in: each holds a value that closes over it, a
        # reference cycle that only the collector could free. When this interpreter is dropped
        # (its analysis superseded, or its hover records built), they are emptied, so that the
        # analysis' memory returns at once, without a garbage collection (see release_scopes).
        # Not for the summaries of the user's other modules (home set): those are kept and shared.
        self._closure_scopes: set[Env] | None = None
        if origin is None:
            self._closure_scopes = set()
            weakref.finalize(self, release_scopes, self._closure_scopes)
        self.unresolved: list = []  # jedi_resolve.Pending: imports only jedi can resolve
        self._home_state = (self.lines, self.path, self.volatile)
        self.models = registry.MODELS
        self.methods = registry.METHODS

    # -- bookkeeping ----------------------------------------------------------------------
    def span(self, node: ast.AST) -> Span:
        key = id(node)
        s = self._span_cache.get(key)
        if s is None:
            s = self.lines.span(node) if self.where is None else self.where.span(node)
            self._span_cache[key] = s
        return s

    def record(self, node: ast.AST, value: Value, kind: str = "expr", name: str | None = None) -> None:
        """Remember a value an expression had (by node: spans are computed once, at the end)."""
        if self.silent or self.where is not None:
            return
        entry = self._records.get(id(node))
        if entry is None:
            self._records[id(node)] = (node, kind, name, [value], [self.ctx])
            return
        values = entry[3]
        if len(values) >= MAX_RECORD_VALUES and not any(map(_partial, values)):
            return  # full of fully known values: nothing can be added or replaced
        if self.observing:  # keeping books for hovers is not looking at a swept value
            obs = self.obs
            obs.paused += 1
            try:
                self._record(entry, value)
            finally:
                obs.paused -= 1
            return
        self._record(entry, value)

    def _record(self, entry: tuple, value: Value) -> None:
        values = entry[3]
        if self.flip_flags:
            return  # flags flipped: only code nothing reached gets values (they hold then)
        if self.hover_only:
            for v in values:
                if _informative(v):
                    return  # code the concrete contexts reached keeps their values
        for v in values:
            if v is value or v == value:
                return
        # Several contexts: a value with unknown parts adds nothing beside a fully known one.
        if _partial(value):
            for v in values:
                if not _partial(v):
                    return
        else:
            keep = [i for i, v in enumerate(values) if not _partial(v)]
            if len(keep) < len(values):
                entry[3][:] = [values[i] for i in keep]
                entry[4][:] = [entry[4][i] for i in keep]
        if len(values) < MAX_RECORD_VALUES:
            values.append(value)
            entry[4].append(self.ctx)

    def recorded(self, node: ast.AST) -> list[Value]:
        """The values recorded so far for an expression node."""
        entry = self._records.get(id(node))
        return list(entry[3]) if entry is not None else []

    def finish_records(self) -> dict[Span, ValueRecord]:
        """The recorded values by source span, for the IDE layer."""
        out = self.records
        for node, kind, name, values, contexts in self._records.values():
            span = self.span(node)
            labels = [c.label() if c is not None else None for c in contexts]
            rec = out.get(span)
            if rec is None:
                out[span] = ValueRecord(span, kind, list(values), name, labels)
            else:
                for v, label in zip(values, labels):
                    if v not in rec.values and len(rec.values) < MAX_RECORD_VALUES:
                        rec.values.append(v)
                        rec.contexts.append(label)
        self._records.clear()
        return out

    def report(self, rule: Rule, message: str, span: Span | None, blame_line: int,
               related: list[Related] | None = None, data: dict[str, Any] | None = None,
               condition: str = "") -> None:
        """A model proved that JAX raises `message` here (with `condition`: unless sizes that
        differ only symbolically turn out equal, `tile_m == tile_n`: a warning)."""
        if self.silent or span is None or self.home is not None or self.hover_only \
                or self.expecting_error:
            return
        if isinstance(span, ForeignSpan) or any(isinstance(r.span, ForeignSpan) for r in related or ()) \
                or any(isinstance(v, ForeignSpan) for v in (data or {}).values()):
            moved = self._into_document(message, span, related or [], data or {})
            if moved is None:
                return
            span, blame_line, related, data = moved
        caught = self.may_be_caught(rule, message)  # always asked: it marks the `try` scopes
        certain = self.certain and not any(f.maybe_returned for f in self.stack) and not caught \
            and not any(lp.maybe_stopped for lp in self.loops if lp is not None)
        finding = Finding(rule, message, span, blame_line, related or [], certain and not condition,
                          data or {}, " <- ".join(reversed(self.context[-3:])), condition=condition)
        key = finding.key
        if self.expected_by_handler(rule, message):
            # The user's code catches exactly this error (a tuning loop skipping configurations
            # that exceed shared memory): not a problem of this context. A memoised call keeps
            # it, for replays in contexts that do not expect it.
            known = next((f for f in self.findings if f.key == key), finding) \
                if key in self._finding_keys else finding
            for entry in self.captures:
                entry.findings.append((known, False))
            return
        if key in self._finding_keys:
            # Seen already: if this path is certain, upgrade the earlier finding.
            for f in self.findings:
                if f.key == key:
                    f.certain = f.certain or (certain and not condition)
                    if self.ctx not in f.contexts:
                        f.contexts.append(self.ctx)
                    for entry in self.captures:
                        entry.findings.append((f, certain))
            return
        for entry in self.captures:
            entry.findings.append((finding, certain))
        finding.contexts.append(self.ctx)
        owner = next((fr.func.node for fr in reversed(self.stack) if fr.func is not None), None)
        finding.owner = id(owner) if owner is not None else None
        self._finding_keys.add(key)
        self.findings.append(finding)

    def _into_document(self, message: str, span: Span, related: list[Related],
                       data: dict[str, Any]) -> tuple[Span, int, list[Related], dict[str, Any]] | None:
        """A finding that involves other files, in the analysed document's terms.

        JAX blames the innermost frame of the error's traceback. When that frame is in another
        of the user's modules, the traceback also holds the frame of the analysed document that
        called into it: the finding is reported there, with the other file's line as related
        information (a document's diagnostics can only sit in that document). Facts the quick
        fixes use are dropped when they point into other files (no fix edits another file)."""
        out_related: list[Related] = []
        if isinstance(span, ForeignSpan):
            if self.entry_span is None:
                return None  # not reached from the analysed document: that module's own business
            out_related.append(Related(span.plain(), f"JAX raises this here: {message}", span.path))
            data = {}
            blame = self.entry_span.line
            span = self.entry_span
        else:
            blame = span.line
            data = {k: v for k, v in data.items() if not isinstance(v, ForeignSpan)}
        for r in related:
            if isinstance(r.span, ForeignSpan):
                out_related.append(Related(r.span.plain(), r.message, r.span.path))
            else:
                out_related.append(r)
        return span, blame, out_related, data

    def settle_lowering_findings(self, start: int) -> None:
        """After a kernel body ran (its findings are `self.findings[start:]`): JAX lowers a kernel
        only if tracing it succeeded, so a certain trace-time error hides the lowering-time ones,
        and a possible one makes them possible too."""
        new = self.findings[start:]
        trace = [f for f in new if f.rule.stage != "lower"]
        if not trace or len(trace) == len(new):
            return
        if any(f.certain for f in trace):
            dropped = [f for f in new if f.rule.stage == "lower"]
            self.findings[start:] = trace
            for f in dropped:
                self._finding_keys.discard(f.key)
        else:
            for f in new:
                f.certain = False

    @contextmanager
    def uncertain(self, flag: bool = True) -> Iterator[None]:
        saved = self.certain
        if flag:
            self.certain = False
        try:
            yield
        finally:
            self.certain = saved

    @contextmanager
    def quiet(self) -> Iterator[None]:
        self.silent += 1
        try:
            yield
        finally:
            self.silent -= 1

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self._check_at:
            self.checkpoint()

    def checkpoint(self) -> None:
        """Every CHECK_EVERY steps: stop if cancelled or out of budget."""
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()
        if self.steps > self.step_limit:
            raise Budget()
        if self.cancel is not None:
            self._check_at = min(self.step_limit, self.steps + CHECK_EVERY)
        else:
            self._check_at = self.step_limit

    # -- module and functions ---------------------------------------------------------------
    def run_module(self) -> None:
        self.exec_block(self.tree.body, self.module_env)

    def call_value(self, func: Value, call: Call) -> Value:
        """Call any abstract callable."""
        self.tick()
        if isinstance(func, FuncVal):
            return self.call_user(func, call)
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
        model = self.models.get(f"{_value_kind(func)}()")  # e.g. `jnp.int32(x)`: "dtype()"
        if model is not None:
            call.wrapped = func
            return model(call)
        return self.unknown_call(call)

    def unknown_call(self, call: Call) -> Value:
        """An unmodelled callable: user functions passed to it still get analysed, but it may
        never call them, so what they do is not certain."""
        with self.uncertain():
            for v in list(call.args) + list(call.kwargs.values()):
                if isinstance(v, FuncVal) and id(v.node) not in self.entered:
                    self.generic_call(v)
        return UNKNOWN

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
        key = None
        if self.memo_enabled and not self.hover_only and func.closure is self.module_env:
            if self.observing:
                with self.obs.unobserved():  # a key is books: equal keys give equal runs either way
                    key = call_key(func, call.args, call.kwargs, call.generic, call.complete,
                                   self.lowering)
                    hit = self.memo.get(key) if key is not None else None
            else:
                key = call_key(func, call.args, call.kwargs, call.generic, call.complete, self.lowering)
                hit = self.memo.get(key) if key is not None else None
        if key is None:
            return self._call_user(func, call)
        if hit is not None:
            if self.observing:
                self.obs.add(hit.observed)  # what the run it stands for looked at
            self._replay(hit, func, call)
            return hit.result if hit.result is not None else UNKNOWN
        if self.silent:
            return self._call_user(func, call)
        entry = MemoEntry(outer_certain=self.certain and not any(f.maybe_returned for f in self.stack))
        self.captures.append(entry)
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
        self.memo[key] = entry
        return entry.result

    def _replay(self, hit: MemoEntry, func: FuncVal, call: Call) -> None:
        ctx = self.call_context(func, call)
        certain = self.certain and not any(f.maybe_returned for f in self.stack) \
            and not any(lp.maybe_stopped for lp in self.loops if lp is not None)
        for outer in self.captures:  # an enclosing call being memoised replays this one too
            outer.findings.extend(hit.findings)
            outer.entered |= hit.entered
        if self.silent:
            return
        self.entered.add(id(func.node))
        for node in hit.entered:
            self.ctx_entered.setdefault(node, set()).add(ctx)
        self.ctx_entered.setdefault(id(func.node), set()).add(ctx)
        for f, was_certain in hit.findings:
            # A handler here that expects the error takes it (asked once: a finding of the same
            # key has the same rule and message).
            if self.expected_by_handler(f.rule, f.message):
                continue
            if f.key not in self._finding_keys:  # captured where a handler expected it
                self._finding_keys.add(f.key)
                self.findings.append(f)
            else:  # the one finding of that key (perhaps first reported from another call)
                f = next(g for g in self.findings if g.key == f.key)
            if ctx not in f.contexts:
                f.contexts.append(ctx)
            caught = self.may_be_caught(f.rule, f.message)
            if certain and not caught and was_certain and hit.outer_certain and not f.condition:
                f.certain = True

    def _call_user(self, func: FuncVal, call: Call) -> Value:
        node = func.node
        if len(self.stack) >= MAX_DEPTH or any(f.func is not None and f.func.node is node
                                                for f in self.stack):
            return UNKNOWN
        if not self.silent:  # a pass that only computes state neither records nor reports
            self.entered.add(id(node))
        saved_ctx = self.ctx
        self.ctx = self.call_context(func, call)
        self.ctx_entered.setdefault(id(node), set()).add(self.ctx)
        for entry in self.captures:
            entry.entered.add(id(node))
        env = Env(func.closure)
        frame = Frame(func)
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
        if not frame.returns:
            return Const(None)
        result = frame.returns[0]
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
            return f"{frame.func.name}()"
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
        saved = self.ctx
        self.ctx = ctx
        try:
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
        for i, p in enumerate(positional):
            if i < len(args):
                v = args[i]
            elif p.arg in kwargs:
                v = kwargs.pop(p.arg)
            elif i >= first_default and (call.complete or generic):
                v = self._default(call, defaults[i - first_default])  # factories' defaults count
            else:
                v = _unbound_param(p)
            env.vars[p.arg] = v
            self.record(p, v, "name", p.arg)
        if a.vararg is not None:
            rest = args[len(positional):]
            env.vars[a.vararg.arg] = TupleVal(tuple(rest)) if call.complete and not generic else UNKNOWN
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if p.arg in kwargs:
                v = kwargs.pop(p.arg)
            elif d is not None and (call.complete or generic):
                v = self._default(call, func.kw_defaults.get(p.arg, UNKNOWN))
            else:
                v = _unbound_param(p)
            env.vars[p.arg] = v
            self.record(p, v, "name", p.arg)
        if a.kwarg is not None:
            env.vars[a.kwarg.arg] = (DictVal(tuple(kwargs.items())) if call.complete and not generic
                                     else UNKNOWN)

    def _default(self, call: Call, default: Value) -> Value:
        """A parameter's default. In the hover pass's second round (`flip_flags`: a function
        once more with nothing known, for lines no context reached) a flag's default
        (`transpose_rhs=False`) is flipped, so the other branch's lines get hovers too.
        Diagnostics never come from the hover pass."""
        if self.flip_flags and self.hover_only and call.generic and isinstance(default, Const) \
                and isinstance(default.value, bool):
            return Const(not default.value)
        return default

    def instantiate(self, cls: ClassVal, call: Call) -> Value:
        attrs: dict[str, Value] = {}
        if cls.is_dataclass:
            for i, (name, default) in enumerate(cls.fields):
                if i < len(call.args):
                    attrs[name] = call.args[i]
                elif name in call.kwargs:
                    attrs[name] = call.kwargs[name]
                elif call.complete:
                    attrs[name] = default
                else:
                    attrs[name] = Opaque(name)
        inst = InstanceVal(cls, attrs)
        init = cls.methods.get("__init__")
        if isinstance(init, FuncVal) and not cls.is_dataclass:
            bound = FuncVal(init.node, init.closure, init.name, init.defaults, init.kw_defaults, inst)
            self.call_user(bound, call)
        post = cls.methods.get("__post_init__")
        if isinstance(post, FuncVal):
            bound = FuncVal(post.node, post.closure, post.name, post.defaults, post.kw_defaults, inst)
            self.call_user(bound, Call(self, call.node, [], {}, [], {}, call.env))
        return inst

    # -- statements -------------------------------------------------------------------------
    def exec_block(self, stmts: list[ast.stmt], env: Env) -> None:
        for stmt in stmts:
            frame = self.stack[-1] if self.stack else None
            if frame is not None and frame.returned:
                return
            if self.loops and self._own_loop() is not None and self.loops[-1].stopped:
                return  # a `break`/`continue` left the iteration on this path
            try:
                self.exec_stmt(stmt, env)
            except Exception as e:  # a budget goes on up; too deep or a bug: this statement gives up
                incomplete.statement_failed(self, stmt, env, e)

    def exec_stmt(self, s: ast.stmt, env: Env) -> None:
        self.tick()
        method = _EXEC.get(type(s))
        if method is not None:
            method(self, s, env)

    def exec_Expr(self, s: ast.Expr, env: Env) -> None:
        self.eval(s.value, env)

    def exec_Pass(self, s: ast.Pass, env: Env) -> None:
        pass

    def exec_Assert(self, s: ast.Assert, env: Env) -> None:
        test = self.truth(self.eval(s.test, env))  # (evaluated for the values it reads: hover)
        if test is False and self.stack:
            self.stack[-1].returned = True  # a failing assert raises: nothing after it runs

    def exec_Return(self, s: ast.Return, env: Env) -> None:
        value = self.eval(s.value, env) if s.value is not None else Const(None)
        self.mark_escaped(value)
        if self.stack:
            frame = self.stack[-1]
            frame.returns.append(value)
            frame.returned = True

    def exec_Raise(self, s: ast.Raise, env: Env) -> None:
        if s.exc is not None:
            self.eval(s.exc, env)
        if self.stack:
            self.stack[-1].returned = True  # nothing after it on this path runs

    def mark_escaped(self, value: Value, depth: int = 0) -> None:
        """Functions handed back to callers (a factory's kernel) will be called by someone."""
        if depth > 4:
            return
        if isinstance(value, FuncVal):
            self.escaped.add(id(value.node))
        elif isinstance(value, TupleVal):
            for item in value.items:
                self.mark_escaped(item, depth + 1)
        elif isinstance(value, (Wrapped, PartialVal)):
            self.mark_escaped(value.func, depth + 1)

    def exec_Break(self, s: ast.Break, env: Env) -> None:
        loop = self._own_loop()
        if loop is not None:
            loop.stopped = True
            loop.broke = True

    def exec_Continue(self, s: ast.Continue, env: Env) -> None:
        loop = self._own_loop()
        if loop is not None:
            loop.stopped = True

    def _own_loop(self) -> "_LoopExits | None":
        """The innermost loop, when its exits are followed and its body is the code running."""
        loop = self.loops[-1] if self.loops else None
        return loop if loop is not None and loop.depth == len(self.stack) else None

    def run_path(self, fn: Callable[[], None]) -> str:
        """Run a path that may not be taken; "return" if it ended the function (return/raise),
        "loop" if it left the iteration of a followed loop (break/continue), "" otherwise.
        Ending either on this path means it may end early: what follows is no longer certain."""
        frame = self.stack[-1] if self.stack else None
        saved = frame.returned if frame else False
        loop = self._own_loop()
        saved_stop = loop.stopped if loop is not None else False
        fn()
        ended = frame.returned if frame else False
        stopped = loop.stopped if loop is not None else False
        if frame is not None:
            frame.returned = saved
            frame.maybe_returned = frame.maybe_returned or ended
        if loop is not None:
            loop.stopped = saved_stop
            loop.maybe_stopped = loop.maybe_stopped or stopped
        return "return" if ended else "loop" if stopped else ""

    def exec_Assign(self, s: ast.Assign, env: Env) -> None:
        value = self.eval(s.value, env)
        named = _named_shape(s, value, env)
        if named is not None:  # `m, k = a.shape` of an unknown `a`: sizes named m, k
            value = named
        for target in s.targets:
            self.assign(target, value, env, s.value)

    def exec_AnnAssign(self, s: ast.AnnAssign, env: Env) -> None:
        if s.value is not None:
            self.assign(s.target, self.eval(s.value, env), env, s.value)

    def exec_AugAssign(self, s: ast.AugAssign, env: Env) -> None:
        current = self.eval(s.target, env) if not isinstance(s.target, ast.Subscript) else None
        if isinstance(s.target, ast.Subscript):
            obj = self.eval(s.target.value, env)
            index = self.eval_index(s.target.slice, env)
            current = self.getitem(obj, index, s.target)
            rhs = self.eval(s.value, env)
            new = self.binop(s.op, current, rhs, s)
            self.setitem(obj, index, new, s.target, s.value, env, aug=True)
            return
        rhs = self.eval(s.value, env)
        self.assign(s.target, self.binop(s.op, current or UNKNOWN, rhs, s), env, s)

    def assign(self, target: ast.expr, value: Value, env: Env, value_node: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.volatile:
                value = Opaque(target.id)  # rebound elsewhere through global/nonlocal
            env.vars[target.id] = value
            self.record(target, value, "store", target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                if isinstance(t, ast.Starred):
                    self.assign(t.value, UNKNOWN, env, None)
                else:
                    self.assign(t, v, env, None)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, env)
            index = self.eval_index(target.slice, env)
            self.setitem(obj, index, value, target, value_node, env)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, env)
            if isinstance(obj, InstanceVal):
                if obj.born < self.iteration_born:
                    self.outside_writes += 1  # state a repeated sweep iteration would miss
                if obj.shared:
                    self.shared_writes.setdefault(id(obj), {})[target.attr] = value
                else:
                    obj.attrs[target.attr] = value
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, env, None)

    def unpack(self, value: Value, n: int, target: ast.AST) -> list[Value]:
        has_star = isinstance(target, (ast.Tuple, ast.List)) and any(
            isinstance(e, ast.Starred) for e in target.elts)
        if isinstance(value, TupleVal) and len(value.items) == n and not has_star:
            return list(value.items)
        if isinstance(value, ArrayVal) and value.shape and not has_star and value.shape[0] == n:
            return [ArrayVal(value.shape[1:], value.dtype)] * n
        return [UNKNOWN] * n

    def exec_If(self, s: ast.If, env: Env) -> None:
        test = self.truth(self.eval(s.test, env))
        if test is True:
            self.exec_block(s.body, env)
            return
        if test is False:
            self.exec_block(s.orelse, env)
            return
        if assume_machine_guard(self, s, env):
            return  # `if <device counts differ>: raise`: analysed for machines where it passes
        self.branch(env, lambda e: self.exec_block(s.body, e), lambda e: self.exec_block(s.orelse, e))

    def branch(self, env: Env, a: Callable[[Env], None], b: Callable[[Env], None]) -> None:
        """Run two paths that may each not run; merge what they leave behind."""
        frame = self.stack[-1] if self.stack else None
        e1, e2 = env.copy(), env.copy()
        with self.uncertain():
            r1 = self.run_path(lambda: a(e1))
            r2 = self.run_path(lambda: b(e2))
        if r1 and r2:  # neither path goes on: what follows does not run
            loop = self._own_loop()
            if "loop" in (r1, r2) and loop is not None:
                loop.stopped = True
            elif frame is not None:
                frame.returned = True
        merge_from = [e for e, r in ((e1, r1), (e2, r2)) if not r] or [e1, e2]
        self.merge_into(env, merge_from)

    @staticmethod
    def merge_into(env: Env, envs: list[Env]) -> None:
        names = set().union(*(e.vars.keys() for e in envs))
        for name in names:
            vals = [e.vars.get(name) for e in envs]
            if any(v is None for v in vals):
                base = env.vars.get(name)
                vals = [v if v is not None else base for v in vals]
            if any(v is None for v in vals):
                env.vars[name] = UNKNOWN
                continue
            out = vals[0]
            for v in vals[1:]:
                out = join(out, v)  # type: ignore[arg-type]
            env.vars[name] = out  # type: ignore[assignment]

    def truth(self, v: Value) -> bool | None:
        if isinstance(v, Const):
            try:
                return bool(v.value)
            except Exception:
                return None
        if isinstance(v, TupleVal):
            return bool(v.items)
        if isinstance(v, (FuncVal, ClassVal, ModuleVal, RefVal, UserModuleVal)):
            return True
        return None

    def exec_For(self, s: ast.For, env: Env) -> None:
        it = self.eval(s.iter, env)
        items = self.iter_items(it)
        if self.ctx is not None and self.ctx.open and not self.silent and items \
                and _names_only(s.target):
            self.sweep(s, env, it, items)
            return
        self.loops.append(None)  # its `break`/`continue` are its own
        try:
            if items is not None and len(items) <= 8 and not _breaks(s.body):
                # Short known iterations are unrolled: each iteration sees its own item.
                for item in items:
                    self.assign(s.target, item, env, None)
                    self.exec_block(s.body, env)
            else:
                elem = self.iter_element(it, items)
                nonempty = bool(items) if items is not None else self.known_nonempty(it)
                self.loop(env, s.target, elem, s.body, certain=nonempty)
        finally:
            self.loops.pop()
        self.exec_block(s.orelse, env)

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
        for i in order:
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
        self.sweep_checked.append((line, done, len(items)))
        if done < len(items):
            import logging

            msg = (f"checked {done} of {len(items)} combinations of this sweep; the analysis budget "
                   f"left out the others")
            logging.getLogger("wgmma_lsp").info("line %d: %s", line + 1, msg)
            self.notes.append((span, msg))
        self.exec_block(s.orelse, env)

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
                        self.lowering, self.kernel_span, self.kernel_wg_axis)

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
        if isinstance(v, TupleVal):
            return list(v.items)
        if isinstance(v, Const) and isinstance(v.value, (range, tuple, list, str)) and len(v.value) <= MAX_UNROLL:
            return [Const(x) for x in v.value]
        if isinstance(v, DictVal):
            return [Const(k) for k, _ in v.items]
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
        if not _breaks(s.body):
            # A short loop whose test is known each time is run as Python runs it (like a short
            # known `for`): each iteration sees its own values (`while rows > 0: rows //= 2`).
            for _ in range(8):
                if not (isinstance(test, Const) and isinstance(test.value, (bool, int))):
                    break
                if not test.value:
                    self.exec_block(s.orelse, env)
                    return
                self.exec_block(s.body, env)
                test = self.eval(s.test, env)
        self.loop(env, None, UNKNOWN, s.body, certain=False)
        self.exec_block(s.orelse, env)

    def exec_With(self, s: ast.With, env: Env) -> None:
        for item in s.items:
            v = self.eval(item.context_expr, env)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, UNKNOWN if not isinstance(v, RefVal) else v, env, None)
        if any(_expects_error(item.context_expr) for item in s.items):
            # `with pytest.raises(...)` / `self.assertRaises(...)`: the error is the test's point.
            self.expecting_error += 1
            try:
                self.exec_block(s.body, env)
            finally:
                self.expecting_error -= 1
            return
        self.exec_block(s.body, env)

    exec_AsyncWith = exec_With

    def exec_Try(self, s: ast.Try, env: Env) -> None:
        # An error raised inside `try` is certain only when no handler can catch it (a TypeError
        # under `except ValueError:` still propagates); handlers and `else` may not run at all.
        scope = _TryScope(_handler_filters(s.handlers))
        self.handlers.append(scope)
        try:
            self.run_path(lambda: self.exec_block(s.body, env))
        finally:
            self.handlers.pop()
        if scope.tripped and self.stack and any(_breaks(h.body) for h in s.handlers):
            # A handler may have caught an error found in the body and left (continue, break,
            # return, raise): what follows may not run.
            self.stack[-1].maybe_returned = True
        frame = self.stack[-1] if self.stack else None
        loop = self._own_loop()
        before = (frame.maybe_returned if frame else False,
                  loop.maybe_stopped if loop else False, loop.broke if loop else False)
        with self.uncertain():
            for h in s.handlers:
                if h.name:
                    env.vars[h.name] = UNKNOWN
                self.run_path(lambda h=h: self.exec_block(h.body, env))
            if not scope.tripped:
                # A handler runs only once an error was caught, and none was found in the body:
                # how its code leaves (`continue`, a re-`raise`) says nothing about what follows.
                if frame is not None:
                    frame.maybe_returned = before[0]
                if loop is not None:
                    loop.maybe_stopped, loop.broke = before[1], before[2]
            self.run_path(lambda: self.exec_block(s.orelse, env))
        self.exec_block(s.finalbody, env)

    exec_TryStar = exec_Try

    def expected_by_handler(self, rule: Rule, message: str) -> bool:
        """Does an enclosing `try` certainly catch this error by its message (`except
        ValueError as e: if "exceeds available shared memory" in e.args[0]: continue`)? The
        user wrote that handler for exactly this error."""
        if not self.handlers:
            return False
        raised = _builtin_exception(rule.exception.rpartition(".")[2])
        return any(scope.expects(raised, message) for scope in self.handlers)

    def may_be_caught(self, rule: Rule, message: str = "") -> bool:
        """Could an enclosing `try` catch the exception JAX raises for `rule` (its class name,
        `ValueError`, and its `message`: a handler that re-raises unless the message says
        "exceeds available shared memory" does not catch a shape error), or has an error it may
        catch been found earlier in its body? (JAX lowers only what traced: a lowering error
        found earlier does not stop a trace error.)"""
        if not self.handlers or self.silent:
            return False
        raised = _builtin_exception(rule.exception.rpartition(".")[2])
        lowering = rule.stage == "lower"
        found = False
        for scope in self.handlers:
            if scope.tripped == "trace" or (scope.tripped and lowering):
                found = True
            if scope.catches(raised, message):
                if scope.tripped != "trace":
                    scope.tripped = "lower" if lowering else "trace"
                found = True
        return found

    def exec_FunctionDef(self, s: ast.FunctionDef, env: Env) -> None:
        defaults = tuple(self.eval(d, env) for d in s.args.defaults)
        kw_defaults = {p.arg: self.eval(d, env) for p, d in zip(s.args.kwonlyargs, s.args.kw_defaults)
                       if d is not None}
        func: Value = FuncVal(s, env, s.name, defaults, kw_defaults)
        if self.where is self.home:  # other modules' functions are analysed in their own files
            self.defined[id(s)] = func  # type: ignore[assignment]
        for dec in reversed(s.decorator_list):
            decorator = self.eval(dec, env)
            func = self.apply_decorator(decorator, func, dec)
        env.vars[s.name] = func
        if self._closure_scopes is not None:
            self._closure_scopes.add(env)
        self.record_def_name(s, func)

    exec_AsyncFunctionDef = exec_FunctionDef

    def record_def_name(self, s: ast.FunctionDef | ast.ClassDef, value: Value) -> None:
        if self.silent or self.where is not None:
            return
        line = s.lineno - 1
        text = self.lines.lines[line] if line < len(self.lines.lines) else ""
        col = text.find(s.name, text.find("def ") if isinstance(s, ast.FunctionDef) else text.find("class "))
        if col >= 0:
            span = Span(line, col, line, col + len(s.name))
            rec = self.records.setdefault(span, ValueRecord(span, "def", [], s.name))
            if value not in rec.values and len(rec.values) < MAX_RECORD_VALUES:
                rec.values.append(value)

    def apply_decorator(self, decorator: Value, func: Value, node: ast.expr) -> Value:
        if isinstance(decorator, ApiVal) and decorator.name in ("dataclasses.dataclass",):
            return func
        call = Call(self, node, [func], {}, [None], {}, None)
        if is_unknown(decorator):
            return UNKNOWN
        return self.call_value(decorator, call)

    def exec_ClassDef(self, s: ast.ClassDef, env: Env) -> None:
        cls_env = Env(env)
        is_dc = False
        for dec in s.decorator_list:
            d = self.eval(dec, env)
            name = d.name if isinstance(d, ApiVal) else (d.api if isinstance(d, Wrapped) else "")
            if name.endswith("dataclass") or (isinstance(d, PartialVal) and isinstance(d.func, ApiVal)
                                              and d.func.name.endswith("dataclass")):
                is_dc = True
        fields: list[tuple[str, Value]] = []
        for stmt in s.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                default = self.eval(stmt.value, cls_env) if stmt.value is not None else UNKNOWN
                if isinstance(default, Wrapped) and default.api == "dataclasses.field":
                    default = default.kwargs.get("default", UNKNOWN)
                fields.append((stmt.target.id, default))
                cls_env.vars[stmt.target.id] = default
            else:
                self.exec_stmt(stmt, cls_env)
        methods = {k: v for k, v in cls_env.vars.items() if isinstance(v, FuncVal)}
        cls = ClassVal(s, s.name, fields, methods, is_dc)
        for k, v in cls_env.vars.items():
            if not isinstance(v, FuncVal):
                cls.methods.setdefault(k, v)
        env.vars[s.name] = cls
        if self._closure_scopes is not None:
            self._closure_scopes.update((env, cls_env))
        self.record_def_name(s, cls)

    def exec_Import(self, s: ast.Import, env: Env) -> None:
        for alias in s.names:
            canon = resolve.canonical_module(alias.name)
            if alias.asname:
                if canon and resolve.is_kernel_ops(alias.name) and self.importer is not None:
                    found = self.importer.import_module(self.path, alias.name)
                    if found is not None:
                        env.vars[alias.asname] = found
                        continue
                env.vars[alias.asname] = ModuleVal(canon, alias.name) if canon else self.user_module(alias.name)
            else:
                top = alias.name.split(".")[0]
                c = resolve.canonical_module(top)
                env.vars[top] = ModuleVal(c) if c else self.user_module(top)

    def user_module(self, dotted: str) -> Value:
        """`import mypkg.allocs as a`: one of the user's modules, read statically (see program)."""
        if self.importer is None:
            return UNKNOWN
        found = self.importer.import_module(self.path, dotted)
        return found if found is not None else UNKNOWN

    def exec_ImportFrom(self, s: ast.ImportFrom, env: Env) -> None:
        canon = resolve.canonical_module(s.module) if s.module and not s.level else None
        for alias in s.names:
            if alias.name == "*":
                if canon:
                    env.star_modules.append(canon)
                elif self.importer is not None:  # one of the user's modules: its public names
                    found = self.importer.import_star(self.path, s.module, s.level)
                    if found is not None:
                        env.vars.update(found[0])
                        env.star_modules.extend(m for m in found[1] if m not in env.star_modules)
                continue
            bound = alias.asname or alias.name
            if canon is None:
                env.vars[bound] = self.imported_elsewhere(s, alias)
                continue
            if resolve.is_kernel_ops(s.module) and self.importer is not None:
                # jax's kernel-ops modules are kernel code, read statically (see program.lookup)
                found = self.importer.import_from(self.path, s.module, 0, alias.name)
                if found is not None:
                    env.vars[bound] = found
                    continue
            sub = resolve.canonical_module(f"{s.module}.{alias.name}")
            if sub is not None and resolve.is_module_name(sub):
                env.vars[bound] = ModuleVal(sub, f"{s.module}.{alias.name}")
            else:
                env.vars[bound] = self.module_attr(canon, alias.name)

    def imported_elsewhere(self, s: ast.ImportFrom, alias: ast.alias) -> Value:
        """A name from a module the import table does not know: one of the user's modules (read
        statically, see wgmma_lsp.program), else what jedi's cache says (see jedi_resolve)."""
        from wgmma_lsp.interpret import jedi_resolve as J

        if self.importer is not None:
            found = self.importer.import_from(self.path, s.module, s.level, alias.name)
            if found is not None:
                return found

        key = J.ImportKey(self.path or "", "." * s.level + (s.module or ""), alias.name)
        found, canonical = J.cached(key)
        if not found:
            line = self.lines.lines[s.lineno - 1] if s.lineno - 1 < len(self.lines.lines) else ""
            col = line.find(alias.name, line.find("import"))
            if col >= 0 and s.lineno == getattr(s, "end_lineno", s.lineno):
                self.unresolved.append(J.Pending(key, s.lineno, col))
            return UNKNOWN
        if canonical is None:
            return UNKNOWN
        if resolve.is_module_name(canonical) or canonical in resolve.SUBMODULES.values():
            return ModuleVal(canonical)
        mod, _, attr = canonical.rpartition(".")
        return self.module_attr(mod, attr) if mod else UNKNOWN

    def exec_Global(self, s: ast.Global, env: Env) -> None:
        pass

    def exec_Delete(self, s: ast.Delete, env: Env) -> None:
        for t in s.targets:
            if isinstance(t, ast.Name):
                v = env.vars.get(t.id)
                if v is not None:  # `del b_smem`: the name still shows what it held
                    self.record(t, v, "name", t.id)
                env.vars[t.id] = UNKNOWN

    # -- expressions ------------------------------------------------------------------------
    def eval(self, node: ast.expr | None, env: Env) -> Value:
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > self._check_at:
            self.checkpoint()
        method = _EVAL.get(type(node))
        try:
            return method(self, node, env) if method is not None else UNKNOWN
        except RecursionError:  # this expression only: unknown, and a WG904 at it
            return incomplete.too_deep(self, node)

    def eval_Constant(self, n: ast.Constant, env: Env) -> Value:
        return Const(n.value)

    def eval_Name(self, n: ast.Name, env: Env) -> Value:
        v = env.lookup(n.id)
        if v is None:
            v = self.builtin_or_star(n.id, env)
        self.record(n, v, "name", n.id)
        return v

    def builtin_or_star(self, name: str, env: Env) -> Value:
        for mod in reversed(env.module_env().star_modules):  # the last `import *` wins
            canon = resolve.canonical_name(mod, name)
            if canon in self.models or canon in CONSTANTS or f"{mod}.{name}" in resolve.SUBMODULES:
                return self.module_attr(mod, name)
        if name in BUILTINS:
            return ApiVal(f"builtins.{name}")
        return UNKNOWN

    def module_attr(self, module: str, attr: str) -> Value:
        full = f"{module}.{attr}"
        sub = resolve.SUBMODULES.get(full)
        if sub is not None:
            return ModuleVal(sub)
        canon = resolve.canonical_name(module, attr)
        const = CONSTANTS.get(canon)
        if const is not None:
            return const
        return ApiVal(canon)

    def eval_Attribute(self, n: ast.Attribute, env: Env) -> Value:
        obj = self.eval(n.value, env)
        v = self.getattr(obj, n.attr, n)
        self.record(n, v, "attr", n.attr)
        return v

    def getattr(self, obj: Value, attr: str, node: ast.AST | None = None) -> Value:
        if isinstance(obj, ModuleVal):
            if obj.origin is not None and node is not None \
                    and jax_api.missing_attribute(node, obj.origin, obj.name, attr, self):
                return UNKNOWN  # AttributeError in the installed JAX
            return self.module_attr(obj.name, attr)
        if isinstance(obj, UserModuleVal):
            return obj.attr(attr)
        if isinstance(obj, ApiVal):
            name = resolve.ALIASES.get(f"{obj.name}.{attr}", f"{obj.name}.{attr}")
            return CONSTANTS.get(name) or ApiVal(name)
        if isinstance(obj, InstanceVal):
            if obj.shared and attr in self.shared_writes.get(id(obj), ()):
                return self.shared_writes[id(obj)][attr]
            if attr in obj.attrs:
                return obj.attrs[attr]
            m = obj.cls.methods.get(attr)
            if isinstance(m, FuncVal):
                node_ = m.node
                is_prop = isinstance(node_, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "property" for d in node_.decorator_list)
                bound = FuncVal(m.node, m.closure, m.name, m.defaults, m.kw_defaults, obj)
                if is_prop:
                    return self.call_user(bound, Call(self, None, [], {}, [], {}, None))
                return bound
            if m is not None:
                return m
            return UNKNOWN
        if isinstance(obj, ClassVal):
            m = obj.methods.get(attr)
            if isinstance(m, FuncVal) and isinstance(m.node, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "classmethod" for d in m.node.decorator_list):
                return FuncVal(m.node, m.closure, m.name, m.defaults, m.kw_defaults, obj)
            return m or dict(obj.fields).get(attr) or UNKNOWN
        if isinstance(obj, Opaque):
            for name, value in getattr(obj, "overrides", ()):
                if name == attr:
                    return value
            if attr == "shape":
                return Opaque(f"{obj.name}.shape")
            if attr in ("at",):
                return UNKNOWN
            if attr == "dtype":  # a dtype known by its spelling: `x.dtype`, `config.dtype`
                return DTypeVal(SymDType(f"{obj.name}.dtype"))
            if attr.startswith("_") or attr in ("T", "ndim", "size", "astype", "reshape"):
                return UNKNOWN
            return Opaque(f"{obj.name}.{attr}")
        kind = _value_kind(obj)
        getter = ATTRIBUTES.get(f"{kind}.{attr}")
        if getter is not None:
            return getter(obj)
        if f"{kind}.{attr}" in self.methods:
            return BoundMethod(obj, attr)
        return UNKNOWN

    def eval_Subscript(self, n: ast.Subscript, env: Env) -> Value:
        obj = self.eval(n.value, env)
        index = self.eval_index(n.slice, env)
        v = self.getitem(obj, index, n)
        self.record(n, v, "subscript")
        return v

    def eval_index(self, node: ast.expr, env: Env) -> Value:
        return self.eval(node, env)

    def getitem(self, obj: Value, index: Value, node: ast.AST | None) -> Value:
        if isinstance(obj, TupleVal):
            i = index.value if isinstance(index, Const) else None
            if isinstance(i, int) and not isinstance(i, bool) and -len(obj.items) <= i < len(obj.items):
                return obj.items[i]
            if isinstance(index, SliceVal):
                s = _const_slice(index)
                if s is not None:
                    return TupleVal(obj.items[s], obj.is_list)
            return UNKNOWN
        if isinstance(obj, DictVal) and isinstance(index, Const):
            for k, v in obj.items:
                if k == index.value:
                    return v
            return UNKNOWN
        if isinstance(obj, Opaque):
            i = index.value if isinstance(index, Const) else None
            if isinstance(i, int) and obj.name.endswith(".shape"):
                return SymInt(D.Sym.var(f"{obj.name}[{i}]"))
            return UNKNOWN
        kind = _value_kind(obj)
        model = GETITEM.get(kind)
        if model is not None:
            return model(self, obj, index, node)
        return UNKNOWN

    def setitem(self, obj: Value, index: Value, value: Value, target: ast.Subscript,
                value_node: ast.AST | None, env: Env, aug: bool = False) -> None:
        self.record(target, self.getitem(obj, index, None) if isinstance(obj, RefVal) else UNKNOWN,
                    "subscript")
        self.record(target.value, obj, "name" if isinstance(target.value, ast.Name) else "expr",
                    target.value.id if isinstance(target.value, ast.Name) else None)
        kind = _value_kind(obj)
        model = SETITEM.get(kind)
        if model is not None:
            model(self, obj, index, value, target, value_node, aug)
        elif isinstance(obj, InstanceVal) or isinstance(obj, DictVal):
            pass

    def eval_Call(self, n: ast.Call, env: Env) -> Value:
        func = self.eval(n.func, env)
        args: list[Value] = []
        arg_nodes: list[ast.expr | None] = []
        complete = True
        for a in n.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, env)
                if isinstance(v, TupleVal):
                    args.extend(v.items)
                    arg_nodes.extend([None] * len(v.items))
                else:
                    complete = False
            else:
                args.append(self.eval(a, env))
                arg_nodes.append(a)
        kwargs: dict[str, Value] = {}
        kw_nodes: dict[str, ast.expr] = {}
        for k in n.keywords:
            v = self.eval(k.value, env)
            if k.arg is None:
                if isinstance(v, DictVal):
                    for key, val in v.items:
                        if isinstance(key, str):
                            kwargs[key] = val
                else:
                    complete = False
            else:
                kwargs[k.arg] = v
                kw_nodes[k.arg] = k.value
        call = Call(self, n, args, kwargs, arg_nodes, kw_nodes, env, complete)
        result = self.call_value(func, call)
        self.record(n, result, "call")
        return result

    def eval_BinOp(self, n: ast.BinOp, env: Env) -> Value:
        return incomplete.eval_binop_chain(self, n, env)  # `a + b + ...`: a loop, not recursion

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        if isinstance(left, Const) and isinstance(right, Const) and type(op) in const_fold.BINOPS:
            try:
                return Const(const_fold.fold(op, left.value, right.value))
            except Exception:  # what CPython raises here (1 / 0, 'a' - 1), or too big: not a value
                return UNKNOWN
        ld, rd = _int_dim(left), _int_dim(right)
        if ld is not None and rd is not None:
            if isinstance(op, ast.Add):
                v = dim_value(D.add(ld, rd))
            elif isinstance(op, ast.Sub):
                v = dim_value(D.sub(ld, rd))
            elif isinstance(op, ast.Mult):
                v = dim_value(D.mul(ld, rd))
            elif isinstance(op, ast.FloorDiv):
                v = dim_value(D.floordiv(ld, rd))
            else:
                v = UNKNOWN
            if v is UNKNOWN and is_int_like(left) and is_int_like(right) and type(op) in _INT_OPS:
                return UNKNOWN_INT  # int op int is an int (non-linear or not a size)
            return v
        if is_int_like(left) and is_int_like(right) and type(op) in _INT_OPS:
            return UNKNOWN_INT
        if isinstance(left, TupleVal) and isinstance(right, TupleVal) and isinstance(op, ast.Add):
            return TupleVal(left.items + right.items, left.is_list)
        if isinstance(left, TupleVal) and isinstance(op, ast.Mult) and isinstance(right, Const) \
                and isinstance(right.value, int) and 0 <= right.value <= MAX_UNROLL:
            return TupleVal(left.items * right.value, left.is_list)
        return array_binop(self, op, left, right, node)

    def eval_UnaryOp(self, n: ast.UnaryOp, env: Env) -> Value:
        v = self.eval(n.operand, env)
        if isinstance(v, Const):
            try:
                if isinstance(n.op, ast.USub):
                    return Const(-v.value)
                if isinstance(n.op, ast.UAdd):
                    return Const(+v.value)
                if isinstance(n.op, ast.Not):
                    return Const(not v.value)
                if isinstance(n.op, ast.Invert):
                    return Const(~v.value)
            except Exception:
                return UNKNOWN
        if isinstance(n.op, ast.USub) and isinstance(v, SymInt):
            return dim_value(D.neg(v.dim))
        if isinstance(n.op, (ast.USub, ast.UAdd, ast.Invert)) and is_int_like(v):
            return UNKNOWN_INT
        if isinstance(n.op, ast.Not):
            t = self.truth(v)
            return Const(not t) if t is not None else UNKNOWN
        if isinstance(v, ArrayVal):
            return v
        return UNKNOWN

    def eval_BoolOp(self, n: ast.BoolOp, env: Env) -> Value:
        values = []
        for e in n.values:
            v = self.eval(e, env)
            t = self.truth(v)
            if isinstance(n.op, ast.And) and t is False:
                return v
            if isinstance(n.op, ast.Or) and t is True:
                return v
            values.append((v, t))
        if all(t is not None for _, t in values):
            return values[-1][0]
        return UNKNOWN

    def eval_Compare(self, n: ast.Compare, env: Env) -> Value:
        left = self.eval(n.left, env)
        result: Value = Const(True)
        for op, comp in zip(n.ops, n.comparators):
            right = self.eval(comp, env)
            r = self.compare(op, left, right)
            if isinstance(r, ArrayVal):
                result = r
            elif isinstance(r, Const) and isinstance(result, Const):
                result = Const(bool(result.value) and bool(r.value))
            else:
                result = UNKNOWN
            left = right
        return result

    def compare(self, op: ast.cmpop, left: Value, right: Value) -> Value:
        if isinstance(left, Const) and isinstance(right, Const):
            fn = _CMPOPS.get(type(op))
            try:
                return Const(fn(left.value, right.value)) if fn else UNKNOWN
            except Exception:
                return UNKNOWN
        if isinstance(op, (ast.Is, ast.IsNot)) and (isinstance(left, Const) and left.value is None
                                                     or isinstance(right, Const) and right.value is None):
            other = right if isinstance(left, Const) and left.value is None else left
            if isinstance(other, (ArrayVal, RefVal, FuncVal, TupleVal, ApiVal, ModuleVal, InstanceVal)):
                return Const(isinstance(op, ast.IsNot))
            return UNKNOWN
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, DTypeVal) and isinstance(right, DTypeVal):
            same = dtypes.same(left.dtype, right.dtype)  # numpy dtypes compare by name
            return UNKNOWN if same is None else Const(same if isinstance(op, ast.Eq) else not same)
        if isinstance(op, (ast.Eq, ast.NotEq)):
            ld, rd = _int_dim(left), _int_dim(right)
            if ld is not None and rd is not None:
                e = D.equal(ld, rd)
                if e is not None:
                    return Const(e if isinstance(op, ast.Eq) else not e)
                return UNKNOWN
        return array_compare(self, op, left, right)

    def eval_IfExp(self, n: ast.IfExp, env: Env) -> Value:
        t = self.truth(self.eval(n.test, env))
        if t is True:
            return self.eval(n.body, env)
        if t is False:
            return self.eval(n.orelse, env)
        with self.uncertain():
            a = self.eval(n.body, env)
            b = self.eval(n.orelse, env)
        return join(a, b)

    def eval_Tuple(self, n: ast.Tuple, env: Env) -> Value:
        return self._seq(n.elts, env, False)

    def eval_List(self, n: ast.List, env: Env) -> Value:
        return self._seq(n.elts, env, True)

    def _seq(self, elts: list[ast.expr], env: Env, is_list: bool) -> Value:
        items: list[Value] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, env)
                if isinstance(v, TupleVal):
                    items.extend(v.items)
                    continue
                return UNKNOWN
            items.append(self.eval(e, env))
        return TupleVal(tuple(items), is_list)

    def eval_Dict(self, n: ast.Dict, env: Env) -> Value:
        items = []
        for k, v in zip(n.keys, n.values):
            if k is None:
                return UNKNOWN
            kv = self.eval(k, env)
            vv = self.eval(v, env)
            if not isinstance(kv, Const):
                return UNKNOWN
            items.append((kv.value, vv))
        return DictVal(tuple(items))

    def eval_Slice(self, n: ast.Slice, env: Env) -> Value:
        return SliceVal(self.eval(n.lower, env), self.eval(n.upper, env), self.eval(n.step, env))

    def eval_Lambda(self, n: ast.Lambda, env: Env) -> Value:
        defaults = tuple(self.eval(d, env) for d in n.args.defaults)
        f = FuncVal(n, env, "<lambda>", defaults)
        if self._closure_scopes is not None:
            self._closure_scopes.add(env)
        if self.where is self.home:
            self.defined[id(n)] = f
        return f

    def eval_JoinedStr(self, n: ast.JoinedStr, env: Env) -> Value:
        for v in n.values:
            if isinstance(v, ast.FormattedValue):
                self.eval(v.value, env)
        return UNKNOWN

    def eval_NamedExpr(self, n: ast.NamedExpr, env: Env) -> Value:
        v = self.eval(n.value, env)
        self.assign(n.target, v, env, n.value)
        return v

    def eval_Starred(self, n: ast.Starred, env: Env) -> Value:
        self.eval(n.value, env)
        return UNKNOWN

    def _comprehension(self, n: ast.ListComp | ast.GeneratorExp | ast.SetComp, env: Env,
                       elt: Callable[[Env], Value]) -> Value:
        if len(n.generators) != 1 or n.generators[0].ifs or n.generators[0].is_async:
            return UNKNOWN
        gen = n.generators[0]
        items = self.iter_items(self.eval(gen.iter, env))
        if items is None or len(items) > MAX_UNROLL:
            inner = Env(env)
            with self.uncertain():
                self.assign(gen.target, UNKNOWN, inner, None)
                elt(inner)
            return UNKNOWN
        out = []
        for item in items:
            inner = Env(env)
            self.assign(gen.target, item, inner, None)
            out.append(elt(inner))
        return TupleVal(tuple(out), True)

    def eval_ListComp(self, n: ast.ListComp, env: Env) -> Value:
        return self._comprehension(n, env, lambda e: self.eval(n.elt, e))

    eval_GeneratorExp = eval_ListComp

    def eval_DictComp(self, n: ast.DictComp, env: Env) -> Value:
        return UNKNOWN

    def eval_Await(self, n: ast.Await, env: Env) -> Value:
        self.eval(n.value, env)
        return UNKNOWN


def _unbound_param(p: ast.arg) -> Value:
    """A parameter no call gives a value: an unknown known by its name, or, annotated `int`
    (`block_k: int`), an int known by its name (it takes part in arithmetic as a Python int)."""
    if isinstance(p.annotation, ast.Name) and p.annotation.id == "int":
        return SymInt(D.Sym.var(p.arg))
    return Opaque(p.arg)


def _named_shape(s: ast.Assign, value: Value, env: Env) -> Value | None:
    """`m, k = a.shape` where `a` is an unknown parameter: its sizes get the names the code gives
    them (`m`, `k`), and `a` becomes an array of that shape (dtype `a.dtype`) from here on."""
    if not (isinstance(value, Opaque) and value.name.endswith(".shape") and len(s.targets) == 1
            and isinstance(s.targets[0], (ast.Tuple, ast.List))
            and all(isinstance(e, ast.Name) for e in s.targets[0].elts)
            and isinstance(s.value, ast.Attribute) and isinstance(s.value.value, ast.Name)):
        return None
    names = [e.id for e in s.targets[0].elts]  # type: ignore[union-attr]
    owner = s.value.value.id
    # `_, n, _ = a.shape`: a throwaway (or repeated) name does not make two sizes one
    dims = tuple(D.Sym.var(n if n != "_" and names.count(n) == 1 else f"{owner}.shape[{i}]")
                 for i, n in enumerate(names))
    if isinstance(env.vars.get(owner), Opaque) and "." not in owner:
        env.vars[owner] = ArrayVal(dims, SymDType(f"{owner}.dtype"))
    return TupleVal(tuple(SymInt(d) for d in dims))


@dataclass
class _TryScope:
    # Per handler: the builtin exception classes it names (None: it may catch anything) and the
    # texts one of which the message must hold for it to keep the exception (None: any message).
    filters: list[tuple[tuple[type, ...] | None, tuple[str, ...] | None]]
    tripped: str = ""  # the stage ("trace", "lower") of the first error found that it may catch

    def expects(self, raised: type | None, message: str) -> bool:
        """A handler keeps exactly this error: it names its class (or one above it) and a text
        the message holds."""
        for classes, texts in self.filters:
            if texts is not None and any(t in message for t in texts) \
                    and (classes is None or (raised is not None and issubclass(raised, classes))):
                return True
        return False

    def catches(self, raised: type | None, message: str) -> bool:
        for classes, texts in self.filters:
            if classes is None or raised is None or issubclass(raised, classes):
                if texts is None or any(t in message for t in texts):
                    return True
        return False


@dataclass
class _LoopExits:
    """A sweep iteration being run: how its body may leave it."""

    depth: int  # the call depth its own statements run at (nested calls cannot leave it)
    stopped: bool = False  # this path left the iteration: the rest of the body does not run on it
    maybe_stopped: bool = False  # some path left it: what follows in the body may not run
    broke: bool = False  # a `break` ran on some path: the later iterations may not run


def _walk(node: ast.AST, handlers: bool) -> Iterator[ast.AST]:
    """`ast.walk`, or (`handlers=False`) a walk that enters neither `except` handlers nor
    nested functions and classes (their exits leave only themselves)."""
    if handlers:
        yield from ast.walk(node)
        return
    skip = (ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, skip))


def rebound_names(tree: ast.AST) -> set[str]:
    """The names `global` and `nonlocal` statements anywhere in the tree name. Those are
    statements: only blocks of statements are walked (an expression holds none), a small part
    of an `ast.walk` over every node (a kernel file's tree is mostly expressions)."""
    out: set[str] = set()
    todo = [tree]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
            continue
        for name in _BLOCK_FIELDS:  # body, orelse, finalbody; except handlers and match cases
            block = getattr(n, name, None)
            if type(block) is list:
                todo.extend(block)
    return out


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _builtin_exception(name: str) -> type | None:
    import builtins

    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def _caught_classes(handlers: list[ast.ExceptHandler]) -> tuple[type, ...] | None:
    """The builtin exception classes a `try`'s handlers name; None when one may catch anything
    (a bare `except:`, or a class that is not a builtin exception: it could be an alias)."""
    out: list[type] = []
    for h in handlers:
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        for n in names:
            cls = _builtin_exception(n.id) if isinstance(n, ast.Name) else None
            if cls is None:
                return None
            out.append(cls)
    return tuple(out)


def _handler_filters(handlers: list[ast.ExceptHandler]
                     ) -> list[tuple[tuple[type, ...] | None, tuple[str, ...] | None]]:
    """Per handler: what it catches (see `_caught_classes`) and which messages it keeps."""
    out: list[tuple[tuple[type, ...] | None, tuple[str, ...] | None]] = []
    for h in handlers:
        out.append((_caught_classes([h]) if h.type is not None else None, _message_filter(h)))
    return out


def _message_filter(h: ast.ExceptHandler) -> tuple[str, ...] | None:
    """The texts a handler keeps the exception for, when it re-raises every other message:

        except ValueError as e:                  except ValueError as e:
          if "exceeds available shared" in e.args[0]:    if "exceeds ..." not in str(e):
            continue                                          raise
          raise

    (jax's own tuning loops skip shared-memory overflows so). None: any message may be kept."""
    name = h.name
    body = h.body
    if not name or not body:
        return None
    last = body[-1]
    if isinstance(last, ast.Raise) and last.exc is None:
        texts: list[str] = []
        for st in body[:-1]:
            if isinstance(st, ast.If) and not st.orelse:
                found = _message_tests(st.test, name, ast.In, ast.Or)
                if found is None:
                    return None
                if _leaves(st.body):
                    texts.extend(found)  # kept (and left) when the message holds a text
                continue  # otherwise it falls through to the re-raise
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                continue  # a print or a log line
            return None
        return tuple(texts)
    first = body[0]
    if isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 \
            and isinstance(first.body[0], ast.Raise) and first.body[0].exc is None:
        return _message_tests(first.test, name, ast.NotIn, ast.And)
    return None


def _message_tests(test: ast.expr, name: str, op: type, joined: type) -> tuple[str, ...] | None:
    """The texts of `"a" in str(e) or "b" in e.args[0]` (`op` ast.In, `joined` ast.Or), or
    of `"a" not in str(e) and "b" not in str(e)` (ast.NotIn, ast.And); None for anything else."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, joined):
        texts = [_message_test(v, name, op) for v in test.values]
        return None if any(t is None for t in texts) else tuple(t for t in texts if t is not None)
    text = _message_test(test, name, op)
    return None if text is None else (text,)


def _message_test(test: ast.expr, name: str, op: type) -> str | None:
    """`"text" in e.args[0]` / `"text" in str(e)` (with `op` ast.In or ast.NotIn): the text."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op)
            and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str)):
        return None
    m = test.comparators[0]
    is_name = lambda n: isinstance(n, ast.Name) and n.id == name  # noqa: E731
    if isinstance(m, ast.Call) and isinstance(m.func, ast.Name) and m.func.id in ("str", "repr") \
            and len(m.args) == 1 and is_name(m.args[0]) and not m.keywords:
        return test.left.value
    if isinstance(m, ast.Subscript) and isinstance(m.value, ast.Attribute) and m.value.attr == "args" \
            and is_name(m.value.value) and isinstance(m.slice, ast.Constant) and m.slice.value == 0:
        return test.left.value
    return None


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Continue, ast.Break, ast.Return))


def _breaks(body: list[ast.stmt], handlers: bool = True) -> bool:
    """Does a loop body leave early (break, continue, return, raise) somewhere? (With
    `handlers=False`, exits inside `except` handlers do not count.) A fact of the syntax:
    kept on each statement node, so loops run once per context walk their bodies once."""
    attr = "_wgmma_breaks" if handlers else "_wgmma_breaks_nh"
    for stmt in body:
        known = getattr(stmt, attr, None)
        if known is None:
            known = _stmt_breaks(stmt, handlers)
            setattr(stmt, attr, known)
        if known:
            return True
    return False


def _stmt_breaks(stmt: ast.stmt, handlers: bool) -> bool:
    for node in _walk(stmt, handlers):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            break
    return False


#: Operators whose result on two Python ints is an int.
_INT_OPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift,
                      ast.BitAnd, ast.BitOr, ast.BitXor})

_EXEC = {getattr(ast, name[5:]): fn for name, fn in vars(Interpreter).items()
         if name.startswith("exec_") and hasattr(ast, name[5:])}
_EVAL = {getattr(ast, name[5:]): fn for name, fn in vars(Interpreter).items()
         if name.startswith("eval_") and hasattr(ast, name[5:])}


def _origin_of(env: Env | None) -> ModuleOrigin | None:
    """The user module a scope belongs to (None: the analysed document)."""
    while env is not None:
        if env.parent is None:
            return env.origin  # type: ignore[return-value]
        env = env.parent
    return None


def _const_slice(s: SliceVal) -> slice | None:
    parts = []
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Const) and (v.value is None or isinstance(v.value, int)):
            parts.append(v.value)
        else:
            return None
    return slice(*parts)


def _int_dim(v: Value) -> D.Dim:
    if isinstance(v, Const) and isinstance(v.value, bool):
        return None
    if isinstance(v, (Const, SymInt)):
        return as_dim(v)
    if isinstance(v, Opaque):
        return D.Sym.var(v.name)
    return None


def _partial(v: Value) -> bool:
    """An array or ref value with an unknown dtype or size, or no value at all."""
    if isinstance(v, RefVal):
        v = v.inner
    if isinstance(v, ArrayVal):
        return v.dtype is None or v.shape is None or any(d is None for d in v.shape)
    return isinstance(v, Unknown)


def _informative(v: Value) -> bool:
    """Does a recorded value say something a hover can show in full?"""
    if isinstance(v, (ArrayVal, RefVal)):
        return "?" not in v.describe()
    return not is_unknown(v)


def _expects_error(expr: ast.expr) -> bool:
    """`pytest.raises(E)`, `self.assertRaises(E)`, `self.assertRaisesRegex(E, ...)`."""
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name == "raises" or name.startswith("assertRaises")


_NOT_CONST = object()  # a sweep binding that is not a constant: always counts as observed
_CARRIED = "<carried> "  # the key of a carried name among a sweep iteration's values


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


def _value_kind(v: Value) -> str:
    """The key models are registered under for methods, attributes and indexing."""
    if isinstance(v, ArrayVal):
        return "array"
    if isinstance(v, RefVal):
        return "ref"
    if isinstance(v, TupleVal):
        return "tuple"
    from wgmma_lsp.interpret.values import AllocSpec, DTypeVal, ShapeDtypeVal

    if isinstance(v, AllocSpec):
        return "alloc"
    if isinstance(v, ShapeDtypeVal):
        return "sds"
    if isinstance(v, DTypeVal):
        return "dtype"
    if isinstance(v, Wrapped):
        return f"wrapped:{v.api}"
    if isinstance(v, Const):
        return type(v.value).__name__
    return type(v).__name__

"""Statements other than loops and `try`: assignment, `if`, `with`, definitions, imports, returns."""

from __future__ import annotations

import ast
import contextlib

from wgmma_lsp import observed
from wgmma_lsp.analysis_types import ValueRecord
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import (
    classes, generators, incomplete, metaclasses, mutation, operators, path_equalities, resolve,
    silent_memo,
)
from wgmma_lsp.interpret.classes import instance_attr
from wgmma_lsp.interpret.block_exits import _expects_error, raises_to_skip
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import SymDType
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.interp_base import MAX_RECORD_VALUES, _value_kind
from wgmma_lsp.interpret.interp_loops import _LoopExits
from wgmma_lsp.interpret.machine_guards import assume_machine_guard
from wgmma_lsp.models import absl_parameterized, containers, jax_imports
from wgmma_lsp.models.registry import WITH_STATES
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ApiVal,
    ArrayVal,
    ClassVal,
    Const,
    DictVal,
    ForeignName,
    FuncVal,
    InstanceVal,
    ModuleVal,
    Opaque,
    PartialVal,
    RefVal,
    SetVal,
    SymInt,
    TupleVal,
    UserModuleVal,
    Value,
    Wrapped,
    is_unknown,
    join,
)
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable


class StatementsMixin:
    """Statements other than loops and `try`: assignment, `if`, `with`, definitions, imports, returns."""

    # -- statements -------------------------------------------------------------------------
    def exec_block(self, stmts: list[ast.stmt], env: Env) -> None:
        # (`stack` and `loops` are the same lists for the interpreter's life; `exec_stmt` and
        # `_own_loop` inlined: this runs for every statement)
        stack, loops, table = self.stack, self.loops, self._EXEC
        for stmt in stmts:
            if stack and stack[-1].returned:
                return
            if loops:
                loop = loops[-1]
                if loop is not None and loop.depth == len(stack) and loop.stopped:
                    return  # a `break`/`continue` left the iteration on this path
            try:
                self.steps += 1  # (as exec_stmt)
                if self.steps > self._check_at:
                    self.checkpoint()
                method = table.get(type(stmt))
                if method is not None:
                    method(self, stmt, env)
            except Exception as e:  # a budget goes on up; too deep or a bug: this statement gives up
                incomplete.statement_failed(self, stmt, env, e)

    def exec_stmt(self, s: ast.stmt, env: Env) -> None:
        self.steps += 1  # (interp.tick, inlined: once per statement)
        if self.steps > self._check_at:
            self.checkpoint()
        method = self._EXEC.get(type(s))
        if method is not None:
            method(self, s, env)

    def exec_Expr(self, s: ast.Expr, env: Env) -> None:
        self.eval(s.value, env)
        if self.stack and raises_to_skip(s.value):
            self.stack[-1].returned = True  # `self.skipTest(...)`, `pytest.skip(...)`: as `raise`

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
            if frame.assumed:  # what this path proves about sizes goes with what it returns
                frame.returns_assumed[len(frame.returns)] = frame.assumed
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
            frame.set_maybe_returned(frame.maybe_returned or ended)
            if ended:
                frame.ends += 1
        if loop is not None:
            loop.stopped = saved_stop
            loop.maybe_stopped = loop.maybe_stopped or stopped
            if stopped:
                loop.stops += 1
        return "return" if ended else "loop" if stopped else ""

    def exec_Assign(self, s: ast.Assign, env: Env) -> None:
        value = self.eval(s.value, env)
        if isinstance(s.value, ast.Attribute):  # (_named_shape's own first test, before the call)
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
        if isinstance(current, InstanceVal):  # `mask &= other`: `__iand__`, else `__and__`...
            by_method = operators.binary(self, s.op, current, rhs, s, inplace=True)
            if by_method is not None:
                self.assign(s.target, by_method, env, s)
                return
        if mutation.is_mutable(current) and (isinstance(s.op, (ast.Add, ast.Mult, ast.BitOr))
                                             or isinstance(current, SetVal)):
            # `xs += ys`, `xs *= n`, `d |= e` change the object in place (every name holding it
            # sees it); the name is bound to the same object
            if containers.in_place(self, current, s.op, rhs):  # type: ignore[arg-type]
                self.assign(s.target, current, env, s)
                return
        self.assign(s.target, self.binop(s.op, current or UNKNOWN, rhs, s), env, s)

    def assign(self, target: ast.expr, value: Value, env: Env, value_node: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.volatile:
                value = Opaque(target.id)  # rebound elsewhere through global/nonlocal
            env.vars[target.id] = value
            if not self.silent and self.where is None:  # (record's own test, before the call)
                self.record(target, value, "store", target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                if isinstance(t, ast.Starred):
                    self.assign(t.value, v if isinstance(v, TupleVal) else UNKNOWN, env, None)
                else:
                    self.assign(t, v, env, None)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, env)
            index = self.eval_index(target.slice, env)
            self.setitem(obj, index, value, target, value_node, env)
        elif isinstance(target, ast.Attribute):
            classes.set_attribute(self, self.eval(target.value, env), target.attr, value)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, env, None)

    def unpack(self, value: Value, n: int, target: ast.AST) -> list[Value]:
        has_star = isinstance(target, (ast.Tuple, ast.List)) and any(
            isinstance(e, ast.Starred) for e in target.elts)
        if isinstance(value, generators.GeneratorVal):  # `a, b = gen()`: what it yields
            items = generators.consume(self, value)
            value = TupleVal(items) if items is not None else UNKNOWN
        if isinstance(value, TupleVal) and len(value.items) == n and not has_star:
            return list(value.items)
        stars = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)] \
            if has_star else []  # type: ignore[attr-defined]
        if isinstance(value, TupleVal) and len(stars) == 1 and len(value.items) >= n - 1:
            # `first, *rest = xs`: the starred name gets a new list of what the others leave
            i, after = stars[0], n - 1 - stars[0]
            middle = value.items[i:len(value.items) - after]
            return list(value.items[:i]) + [TupleVal(middle, True)] + list(value.items[len(value.items) - after:])
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
        on_true, on_false = self._proven_by(s.test)
        self.branch(env, lambda e: self._assuming(on_true, e, s.body),
                    lambda e: self._assuming(on_false, e, s.orelse), (on_true, on_false))

    def _proven_by(self, test: ast.expr) -> tuple[tuple, tuple]:
        """The size equation (`a - b == 0`) an `if`'s test proves on its true and false branch."""
        dim_test, self.dim_test = self.dim_test, None
        if dim_test is None or dim_test[0] is not test:
            return (), ()
        eq = (dim_test[1],)
        return (eq, ()) if isinstance(test.ops[0], ast.Eq) else ((), eq)  # type: ignore[attr-defined]

    def _assuming(self, eqs: tuple, env: Env, body: list[ast.stmt]) -> None:
        """Run one branch of an `if`, its frame holding `eqs` (what it returns carries them)."""
        frame = self.stack[-1] if self.stack else None
        if not eqs or frame is None:
            self.exec_block(body, env)
            return
        saved = frame.assumed
        frame.assumed = saved + eqs
        try:
            self.exec_block(body, env)
        finally:
            frame.assumed = saved

    def branch(self, env: Env, a: Callable[[Env], None], b: Callable[[Env], None],
               assumed: tuple[tuple, tuple] = ((), ())) -> None:
        """Run two paths that may each not run; merge what they leave behind (`assumed`: the
        size equations each path holds, interpret/path_equalities.py)."""
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
        paths = [(e, eqs) for e, r, eqs in ((e1, r1, assumed[0]), (e2, r2, assumed[1])) if not r] \
            or [(e1, assumed[0]), (e2, assumed[1])]
        self.merge_into(env, [e for e, _ in paths], [eqs for _, eqs in paths])

    @staticmethod
    def merge_into(env: Env, envs: list[Env], assumed: list[tuple] | None = None) -> None:
        scopes = [e.vars for e in envs]
        eqs = assumed if assumed is not None and any(assumed) else None
        names = set().union(*scopes)
        out_vars = env.vars
        if len(scopes) == 2 and eqs is None:  # two paths (most merges): the loop below, without its lists
            _merge_two(out_vars, scopes[0], scopes[1], names)
            return
        for name in names:
            vals = [s.get(name) for s in scopes]
            first = vals[0]
            if first is not None and all(v is first for v in vals):
                out_vars[name] = first  # the same value on every path (what join(v, v) gives)
                continue
            if any(v is None for v in vals):
                base = env.vars.get(name)
                vals = [v if v is not None else base for v in vals]
            if any(v is None for v in vals):
                env.vars[name] = UNKNOWN
                continue
            out = vals[0]
            if eqs is not None:
                out = path_equalities.join_all(vals, eqs)  # type: ignore[arg-type]
            else:
                for v in vals[1:]:
                    out = join(out, v)  # type: ignore[arg-type]
            env.vars[name] = out  # type: ignore[assignment]

    def truth(self, v: Value) -> bool | None:
        if isinstance(v, Const):
            try:
                return bool(v.value)
            except Exception:
                return None
        if isinstance(v, (TupleVal, DictVal, SetVal)):
            return bool(v.items)
        if isinstance(v, (FuncVal, ClassVal, ModuleVal, RefVal, UserModuleVal)):
            return True
        if isinstance(v, InstanceVal):
            t = classes.truth(v)
            return t if t is not None else operators.truth(self, v)  # `__bool__`, `__len__`
        return None

    def exec_With(self, s: ast.With, env: Env) -> None:
        states = []
        for item in s.items:
            v = self.eval(item.context_expr, env)
            if isinstance(v, Wrapped) and (state := WITH_STATES.get(_value_kind(v))) is not None:
                states.append(state(v))  # (a state JAX sets for the block: forced interpret mode)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, self.entered_value(v, item.context_expr), env, None)
        if not states:
            self._with_body(s, env)
            return
        with contextlib.ExitStack() as stack:
            for cm in states:
                stack.enter_context(cm)
            self._with_body(s, env)

    def _with_body(self, s: ast.With, env: Env) -> None:
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

    def entered_value(self, v: Value, node: ast.expr) -> Value:
        """What `with v as name:` binds: `v.__enter__()` where it is known — a model's
        (`ThreadPoolExecutor()`), a user class's own method — a ref as itself; else unknown."""
        if isinstance(v, RefVal):
            return v
        enter = self.methods.get(f"{_value_kind(v)}.__enter__") if isinstance(v, Wrapped) else None
        if enter is not None:
            return enter(v, Call(self, node, [], {}, [], {}, None))
        if isinstance(v, InstanceVal) and not v.shared:
            m = instance_attr(self, v, "__enter__")
            if isinstance(m, FuncVal):
                return self.call_user(m, Call(self, node, [], {}, [], {}, None))
        return UNKNOWN

    def exec_FunctionDef(self, s: ast.FunctionDef, env: Env) -> None:
        defaults = tuple(self.eval(d, env) for d in s.args.defaults)
        kw_defaults = {p.arg: self.eval(d, env) for p, d in zip(s.args.kwonlyargs, s.args.kw_defaults)
                       if d is not None}
        func: Value = FuncVal(s, env, s.name, defaults, kw_defaults)
        if self.where is self.home:  # other modules' functions are analysed in their own files
            self.defined[id(s)] = func  # type: ignore[assignment]
            if self.captures:
                silent_memo.note_defined(self, id(s))
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
        """A class as CPython builds it: its bases, its body run in a scope of its own, then
        what its decorators and bases make of it (interpret/classes.py)."""
        bases = tuple(classes.base_value(self, b, env) for b in s.bases)
        keywords = {kw.arg: self.eval(kw.value, env) for kw in s.keywords if kw.arg}
        spread = any(kw.arg is None for kw in s.keywords)  # `**options`: not followed
        cls_env = Env(env)
        cls_env.class_scope = True
        is_dc = frozen = validated = False
        options: dict[str, Value] = {}
        others: list[tuple[Value, ast.expr]] = []  # decorators applied to the class once made
        for dec in s.decorator_list:
            d = self.eval(dec, env)
            name = d.name if isinstance(d, ApiVal) else (d.api if isinstance(d, Wrapped) else "")
            if not (_makes_dataclass(name) or (isinstance(d, PartialVal) and isinstance(d.func, ApiVal)
                                               and _makes_dataclass(d.func.name))):
                others.append((d, dec))
            else:
                is_dc = True
                options = d.kwargs if isinstance(d, (Wrapped, PartialVal)) else {}
                validated = validated or self._pydantic_decorator(dec, env)
                frozen_default = Const(name == "flax.struct.dataclass")  # flax's are frozen
                frozen = self.truth(options.get("frozen", frozen_default)) is True
        kind = classes.kind_of(bases)
        takes_fields = is_dc or kind in ("namedtuple", "pydantic")
        fields: list[tuple[str, Value]] = []
        kw_only = is_dc and self.truth(options.get("kw_only", Const(False))) is True
        for stmt in s.body:
            if takes_fields and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and _class_var(stmt.annotation) == "KW_ONLY":
                kw_only = True  # `_: KW_ONLY`: the fields after it are keyword-only
            elif takes_fields and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and not _class_var(stmt.annotation):
                default = self.eval(stmt.value, cls_env) if stmt.value is not None else UNKNOWN
                if stmt.value is None:
                    default = _REQUIRED
                if kw_only:  # (a field spec that says kw_only=True is one too: classes.py)
                    spec = dict(default.kwargs) if isinstance(default, Wrapped) \
                        and default.api == "dataclasses.field" else \
                        ({} if default is _REQUIRED else {"default": default})
                    default = Wrapped("dataclasses.field", UNKNOWN, {**spec, "kw_only": Const(True)})
                fields.append((stmt.target.id, default))
                attr = default.kwargs.get("default") if isinstance(default, Wrapped) \
                    and default.api in ("dataclasses.field", "pydantic.Field") else default
                if attr is not None and attr is not _REQUIRED:
                    cls_env.vars[stmt.target.id] = attr  # the class attribute
            else:
                self.exec_stmt(stmt, cls_env)
        methods = {k: v for k, v in cls_env.vars.items() if isinstance(v, FuncVal)}
        cls = ClassVal(s, s.name, [(n, UNKNOWN if d is _REQUIRED else d) for n, d in fields], methods,
                       is_dc, bases=bases, kind=kind, frozen=frozen, validated=validated,
                       shared=self.home is not None,
                       compares_fields=is_dc and self.truth(options.get("eq", Const(True))) is True)
        for k, v in cls_env.vars.items():
            if not isinstance(v, FuncVal):
                cls.methods.setdefault(k, v)
        if kind in classes.ENUMS:
            classes.make_members(self, cls)
        if absl_parameterized.is_parameterized_testcase(classes.mro(cls), lambda c: c.bases):
            absl_parameterized.expand(cls.methods)
        value: Value = cls
        meta = metaclasses.metaclass_of(bases, keywords.get("metaclass"))
        if meta is not None:  # the user's metaclass makes the class (interpret/metaclasses.py)
            others_kw = {k: v for k, v in keywords.items() if k != "metaclass"}
            value = UNKNOWN if spread else metaclasses.make(self, meta, cls, dict(cls_env.vars), others_kw, s)
        for d, dec in reversed(others):  # innermost first, as CPython applies them
            value = self.apply_decorator(d, value, dec)
        env.vars[s.name] = value
        if self._closure_scopes is not None:
            self._closure_scopes.update((env, cls_env))
        self.record_def_name(s, cls)

    def _pydantic_decorator(self, dec: ast.expr, env: Env) -> bool:
        """`@pydantic.dataclasses.dataclass(...)`, however imported: a dataclass whose
        `__init__` validates (and converts) what it is given."""
        node = dec.func if isinstance(dec, ast.Call) else dec
        with self.quiet():  # (evaluated once more, for its name only)
            f = self.eval(node, env)
        return isinstance(f, ApiVal) and f.name.startswith("pydantic.")

    def exec_Import(self, s: ast.Import, env: Env) -> None:
        if not self.silent and self.where is None:  # a JAX module the installed JAX lacks: WG110
            jax_imports.check_import(self, s)
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
        """`import mypkg.allocs as a`: one of the user's modules, read statically (see program);
        another (a third-party package) is a name, nothing more."""
        found = self.importer.import_module(self.path, dotted) if self.importer is not None else None
        return found if found is not None else ForeignName(dotted)

    def exec_ImportFrom(self, s: ast.ImportFrom, env: Env) -> None:
        if not self.silent and self.where is None:  # a JAX module or name it lacks: WG110/111
            jax_imports.check_import(self, s)
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
        line = self.lines.lines[s.lineno - 1] if s.lineno - 1 < len(self.lines.lines) else ""
        col = line.find(alias.name, line.find("import"))
        if not found:
            if col >= 0 and s.lineno == getattr(s, "end_lineno", s.lineno):
                self.unresolved.append(J.Pending(key, s.lineno, col))
            return ForeignName(f"{s.module}.{alias.name}") if s.module and not s.level else UNKNOWN
        # What jedi said, for `check`'s result cache (it asks jedi again to validate an entry).
        observed.note(J.OBSERVATION, J.observation_key(J.Pending(key, s.lineno, col)), canonical)
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
            if isinstance(t, ast.Subscript):  # `del d[k]`, `del xs[i]`: in place
                containers.del_item(self, self.eval(t.value, env), self.eval_index(t.slice, env))
            elif isinstance(t, ast.Attribute):  # `del obj.x`: a later read finds the class's
                classes.set_attribute(self, self.eval(t.value, env), t.attr, None)
            elif isinstance(t, ast.Name):
                v = env.vars.get(t.id)
                if v is not None:  # `del b_smem`: the name still shows what it held
                    self.record(t, v, "name", t.id)
                env.vars[t.id] = UNKNOWN


_REQUIRED = Opaque("<required field>")  # a field without a default


def _class_var(annotation: ast.expr) -> str:
    """`x: ClassVar[int] = 3` (and `_: KW_ONLY`, `InitVar`) declare no field of its own: the
    name of that annotation, else ""."""
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name if name in ("ClassVar", "KW_ONLY", "InitVar") else ""


def _named_shape(s: ast.Assign, value: Value, env: Env) -> Value | None:
    """`m, k = a.shape` where `a` is an unknown parameter: its sizes get the names the code gives
    them (`m`, `k`), and `a` becomes an array of that shape (dtype `a.dtype`) from here on."""
    if not (len(s.targets) == 1 and isinstance(s.targets[0], (ast.Tuple, ast.List))
            and all(isinstance(e, ast.Name) for e in s.targets[0].elts)
            and isinstance(s.value, ast.Attribute) and s.value.attr == "shape"
            and isinstance(s.value.value, ast.Name)):
        return None
    names = [e.id for e in s.targets[0].elts]  # type: ignore[union-attr]
    owner = s.value.value.id
    held = env.vars.get(owner)
    if isinstance(held, ArrayVal) and held.shape is None and is_unknown(value) and "." not in owner:
        # an array of unknown rank (`lax.collapse` of an unknown): unpacking its shape into
        # names says its rank (any other rank raises here) and names its sizes
        dims = tuple(D.Sym.var(n if n != "_" and names.count(n) == 1 else f"{owner}.shape[{i}]")
                     for i, n in enumerate(names))
        env.vars[owner] = ArrayVal(dims, held.dtype if held.dtype is not None
                                   else SymDType(f"{owner}.dtype"), held.layout)
        return TupleVal(tuple(SymInt(d) for d in dims))
    if not (isinstance(value, Opaque) and value.name.endswith(".shape")):
        return None
    # `_, n, _ = a.shape`: a throwaway (or repeated) name does not make two sizes one
    dims = tuple(D.Sym.var(n if n != "_" and names.count(n) == 1 else f"{owner}.shape[{i}]")
                 for i, n in enumerate(names))
    if isinstance(env.vars.get(owner), Opaque) and "." not in owner:
        env.vars[owner] = ArrayVal(dims, SymDType(f"{owner}.dtype"))
    return TupleVal(tuple(SymInt(d) for d in dims))


def _merge_two(out_vars: dict, a: dict, b: dict, names: set[str]) -> None:
    """`merge_into` of two paths' names, name by name in the same order, each as it decides."""
    for name in names:
        x, y = a.get(name), b.get(name)
        if x is not None and x is y:
            out_vars[name] = x  # the same value on both paths (what join(v, v) gives)
            continue
        if x is None or y is None:
            base = out_vars.get(name)
            if x is None:
                x = base
            if y is None:
                y = base
            if x is None or y is None:
                out_vars[name] = UNKNOWN
                continue
        out_vars[name] = join(x, y)


def _makes_dataclass(name: str) -> bool:
    """A decorator that makes a dataclass (`dataclasses.dataclass`, flax's, pydantic's, chex's);
    not JAX's `register_dataclass`, which registers one as a pytree (models/python.py)."""
    return name.endswith("dataclass") and not name.endswith("register_dataclass")

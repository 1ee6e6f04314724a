"""`try`: which findings a handler expects or may catch."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from wgmma_lsp.interpret.ast_walk import push_children
from wgmma_lsp.interpret.block_exits import _breaks, _leaves
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.values import UNKNOWN, join
from wgmma_lsp.rules.base import Rule


class TryMixin:
    """`try`: which findings a handler expects or may catch."""

    def exec_Try(self, s: ast.Try, env: Env) -> None:
        # An error raised inside `try` is certain only when no handler can catch it (a TypeError
        # under `except ValueError:` still propagates); handlers and `else` may not run at all.
        if _next_only(s):
            self._try_next(s, env)
            return
        scope = _TryScope(_handler_filters(s.handlers))
        start = env.copy() if s.handlers else None
        self.handlers.append(scope)
        try:
            self.run_path(lambda: self.exec_block(s.body, env))
        finally:
            self.handlers.pop()
        if scope.tripped and self.stack and any(_breaks(h.body) for h in s.handlers):
            # A handler may have caught an error found in the body and left (continue, break,
            # return, raise): what follows may not run.
            self.stack[-1].set_maybe_returned(True)
            self.stack[-1].ends += 1
        frame = self.stack[-1] if self.stack else None
        loop = self._own_loop()
        before = (frame.maybe_returned if frame else False,
                  loop.maybe_stopped if loop else False, loop.broke if loop else False)
        caught: list[Env] = []  # where the handlers that go on leave the names
        with self.uncertain():
            # A handler starts from where the body raised: any point of it (a name the body
            # binds once is its old or its new value; bound more often, unknown).
            raised = _raise_state(start, env, s) if start is not None else env
            for h in s.handlers:
                e = raised.copy()
                if h.name:
                    e.vars[h.name] = UNKNOWN
                if not self.run_path(lambda h=h, e=e: self.exec_block(h.body, e)):
                    caught.append(e)
            if not scope.tripped:
                # A handler runs only once an error was caught, and none was found in the body:
                # how its code leaves (`continue`, a re-`raise`) says nothing about what follows.
                if frame is not None:
                    frame.set_maybe_returned(before[0])
                if loop is not None:
                    loop.maybe_stopped, loop.broke = before[1], before[2]
            self.run_path(lambda: self.exec_block(s.orelse, env))
        if caught:  # after the statement: the body's (and else's) path, or a handler's
            self.merge_into(env, [env.copy(), *caught])
        self.exec_block(s.finalbody, env)

    exec_TryStar = exec_Try

    def _try_next(self, s: ast.Try, env: Env) -> None:
        """`try: a, b = next(it)` ... / `except StopIteration:` (`_next_only`), as CPython runs
        it: each `next` that gives an item is assigned; one of an exhausted iterator raises (its
        targets keep their values) and the first handler runs; one not known to give an item
        may do either (both paths run, uncertain)."""
        scope = _TryScope(_handler_filters(s.handlers), depth=len(self.stack))
        self.handlers.append(scope)
        try:
            for i, st in enumerate(s.body):
                scope.next_state = ""
                value = self.eval(st.value, env)
                state = scope.next_state
                if state == "item":
                    self.assign(st.targets[0], value, env, st.value)
                    continue
                rest = s.body[i + 1:]

                def raised(e: Env) -> None:
                    self._stop_iteration_handler(s, e)

                def went_on(e: Env, st: ast.Assign = st, value=value, rest=rest) -> None:
                    self.assign(st.targets[0], value, e, st.value)
                    self.exec_block(rest, e)
                    self.exec_block(s.orelse, e)

                if state == "exhausted":
                    raised(env)
                else:
                    self.branch(env, raised, went_on)
                self.exec_block(s.finalbody, env)
                return
        finally:
            self.handlers.pop()
        self.exec_block(s.orelse, env)
        self.exec_block(s.finalbody, env)

    def _stop_iteration_handler(self, s: ast.Try, env: Env) -> None:
        """The first handler of a `next`-only try runs (each catches StopIteration)."""
        h = s.handlers[0]
        if h.name:
            env.vars[h.name] = UNKNOWN
        self.exec_block(h.body, env)

    def expected_by_handler(self, rule: Rule, message: str) -> bool:
        """Does an enclosing `try` certainly catch this error by its message (`except
        ValueError as e: if "exceeds available shared memory" in e.args[0]: continue`)? The
        user wrote that handler for exactly this error."""
        if not self.handlers:
            return False
        raised = _builtin_exception(rule.exception.rpartition(".")[2])
        return any(scope.expects(raised, message) for scope in self.handlers)

    def next_item_given(self, state: str) -> None:
        """What a `next(it)` did: "item" (gave one), "exhausted" (raised StopIteration) or
        "unknown" (a `next`-only try follows it, `_try_next`)."""
        if self.handlers:
            self.handlers[-1].next_item_given(len(self.stack), state)

    def end_try_bodies(self, rule: Rule, message: str, first: int) -> bool:
        """JAX raised `rule` here on every path of the run (followon.raised): the rest of the body
        of the innermost `try` of the run (`handlers[first:]`) that may catch it, and of every
        `try` inside that one, never runs. False when none may catch it."""
        raised = _builtin_exception(rule.exception.rpartition(".")[2])
        handlers = self.handlers
        for i in range(len(handlers) - 1, first - 1, -1):
            if handlers[i].catches(raised, message):
                for scope in handlers[i:]:
                    if not scope.dead:
                        scope.dead = self.report_serial
                return True
        return False

    def may_be_caught(self, rule: Rule, message: str = "") -> bool:
        """Could an enclosing `try` catch the exception JAX raises for `rule` (its class name,
        `ValueError`, and its `message`: a handler that re-raises unless the message says
        "exceeds available shared memory" does not catch a shape error), or has an error it may
        catch been found earlier in its body? (JAX lowers only what traced: a lowering error
        found earlier does not stop a trace error.)"""
        if not self.handlers or self.silent:
            return False
        raised = _builtin_exception(rule.exception.rpartition(".")[2])
        lowering = rule.installed_stage() == "lower"
        found = False
        for scope in self.handlers:
            if scope.tripped == "trace" or (scope.tripped and lowering):
                found = True
            if scope.catches(raised, message):
                if scope.tripped != "trace":
                    scope.tripped = "lower" if lowering else "trace"
                found = True
        return found


@dataclass
class _TryScope:
    """The handlers of a `try` being run."""
    # Per handler: the builtin exception classes it names (None: it may catch anything) and the
    # texts one of which the message must hold for it to keep the exception (None: any message).
    filters: list[tuple[tuple[type, ...] | None, tuple[str, ...] | None]]
    tripped: str = ""  # the stage ("trace", "lower") of the first error found that it may catch
    # The report after which its body runs no more (0: none yet): an error raised on every path
    # of the run that it, or a `try` inside it, may catch (followon.raised).
    dead: int = 0
    # A `next`-only try (`_next_only`): the frame depth its body runs at, and what the last
    # `next(it)` there did: "item" (gave one), "exhausted" (raised StopIteration), "unknown".
    depth: int = -1
    next_state: str = ""

    def next_item_given(self, depth: int, state: str) -> None:
        if depth == self.depth:
            self.next_state = state

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


def _raise_state(start: Env, end: Env, node: ast.Try) -> Env:
    """The names as a handler may find them: bound by the body once, the value before it or
    after it; bound more than once (or in a loop), unknown."""
    out = end.copy()
    bindings = getattr(node, "_wgmma_body_bindings", None)  # kept on the node, as generators.py does
    if bindings is None:
        bindings = node._wgmma_body_bindings = _bindings(node.body, 1)  # type: ignore[attr-defined]
    for name, times in bindings.items():
        a, b = start.vars.get(name), end.vars.get(name)
        out.vars[name] = UNKNOWN if times > 1 or a is None or b is None else join(a, b)
    return out


def _bindings(stmts: list[ast.stmt], weight: int) -> dict[str, int]:
    """How many times each name may be bound by these statements (anything inside a loop counts
    twice); a nested function or class binds only its own name here."""
    out: dict[str, int] = {}
    todo: list[tuple[ast.AST, int]] = [(stmt, weight) for stmt in stmts]
    while todo:
        node, w = todo.pop()
        name = None
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            name = node.id
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = out.get(node.name, 0) + w
            continue
        elif isinstance(node, ast.alias):
            name = (node.asname or node.name).split(".")[0]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            name = node.name
        if name is not None:
            out[name] = out.get(name, 0) + w
        inner = 2 if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)) else w
        kids: list[ast.AST] = []
        push_children(kids, node)  # (ast.iter_child_nodes, without its generators)
        todo.extend((c, inner) for c in kids)
    return out


def _next_only(s: ast.Try) -> bool:
    """A `try` whose handlers catch only StopIteration and whose body is only `target =
    next(name)` statements (names or tuples of names as targets): only an exhausted iterator
    can make a handler run (unpacking raises ValueError, which they do not catch)."""
    if not s.handlers or any(_caught_classes([h]) != (StopIteration,) for h in s.handlers if h.type is not None) \
            or any(h.type is None for h in s.handlers):
        return False
    for st in s.body:
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
            return False
        t, v = st.targets[0], st.value
        names = t.elts if isinstance(t, ast.Tuple) else [t]
        if not all(isinstance(n, ast.Name) for n in names):
            return False
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "next"
                and len(v.args) == 1 and isinstance(v.args[0], ast.Name) and not v.keywords):
            return False
    return True


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

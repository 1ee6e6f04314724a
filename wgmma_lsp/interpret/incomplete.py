"""Where the analysis stops short, and why: never a silent pass.

Three things can stop the interpreter before it has checked some code:

- **the step budget.** Each piece of the document — a top-level statement, an entry point, a
  `__main__` block, a function analysed with nothing known — may spend `piece_steps()`
  interpreter steps (the interpreter's `MAX_STEPS`), and the whole document `file_steps(lines)`:
  30 steps a line, at least two pieces' worth. So a big file is analysed in pieces, the budget
  per function, and its analysis still ends in bounded time. A piece that runs out stops where
  it was (the innermost statement of the document being run); the next piece starts afresh.
  Once the document's budget is spent, the rest is not analysed.
- **nesting deeper than Python's recursion limit.** The expression the interpreter was
  evaluating when it ran out of stack gets an unknown value (which proves nothing); the rest
  of the statement and of the file is analysed. A long chain of binary operators
  (`a + a + ... + a`, generated code) is evaluated without recursion (`eval_binop_chain`).
- **an exception in the interpreter or a model** (a bug in wgmma-lsp): the statement gives
  up — the names it binds become unknown, so nothing after it is proven from a half-done
  statement — one WARNING log line names the exception, and the analysis goes on with the next
  statement. With `WGMMA_LSP_STRICT=1` (the test suite sets it) the exception propagates
  instead, so a crash fails the tests rather than becoming a note.

Each stop is an `analysis.Incomplete` at the place it happened, reported as WG904 (an
information diagnostic in the editor; a line and a non-clean summary in `wgmma-lsp check`).
"""

from __future__ import annotations

import ast
import os
import threading

from wgmma_lsp import logs
from wgmma_lsp.analysis_types import Incomplete
from wgmma_lsp.interpret import interp_base
from wgmma_lsp.interpret.followon import RunScope
from wgmma_lsp.spans import LineIndex, Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable, Protocol
    from wgmma_lsp.interpret.env import Env
    from wgmma_lsp.interpret.origin import ModuleOrigin
    from wgmma_lsp.interpret.values import Value

    class Interpreter(Protocol):
        """What this module reads and sets on the interpreter (`interp.Interpreter`)."""

        path: str | None
        lines: LineIndex
        home: "ModuleOrigin | None"
        where: "ModuleOrigin | None"
        entry_span: Span | None
        hover_only: bool
        incomplete: list
        steps: int
        step_limit: int
        cancel: threading.Event | None
        _check_at: int
        _home_state: tuple

        def span(self, node: ast.AST) -> Span: ...
        def eval(self, node: ast.expr | None, env: "Env") -> "Value": ...
        def binop(self, op: ast.operator, left: "Value", right: "Value", node: ast.AST) -> "Value": ...
        def record(self, node: ast.AST, value: "Value", kind: str = "expr", name: str | None = None) -> None: ...
        def tick(self) -> None: ...


log = logs.logger()

STRICT_ENV = "WGMMA_LSP_STRICT"
FILE_STEPS_PER_LINE = 30  # the document's whole budget: 30 steps a line, at least two pieces'
FILE_PIECES = 2  # (one runaway piece of a small file leaves as much for all the others)
MAX_PER_DOCUMENT = 50  # stops recorded per document (each one also logs)


def strict() -> bool:
    """Strict mode (the tests): an exception in the interpreter or a model propagates."""
    return os.environ.get(STRICT_ENV, "") not in ("", "0")


def piece_steps() -> int:
    return interp_base.MAX_STEPS


def file_steps(n_lines: int) -> int:
    """The steps a whole `n_lines`-line document may spend."""
    return max(FILE_PIECES * piece_steps(), FILE_STEPS_PER_LINE * n_lines)


def set_limit(interp: "Interpreter", limit: int) -> None:
    """From now on the interpreter raises `Budget` once it has made `limit` steps in all."""
    interp.step_limit = limit
    interp._check_at = min(limit, interp.steps + interp_base.CHECK_EVERY) if interp.cancel is not None else limit


def record(interp: "Interpreter", span: Span | None, reason: str, message: str) -> bool:
    """Note a stop in the analysed document (once per line and reason); False if it was not new."""
    if span is None or interp.home is not None or interp.hover_only:
        return False  # a summary of another module reports nothing; the hover pass is not published
    if len(interp.incomplete) >= MAX_PER_DOCUMENT:
        return False
    if any(s.span.line == span.line and s.reason == reason for s in interp.incomplete):
        return False
    interp.incomplete.append(Incomplete(span, reason, message))
    return True


def line_span(interp: "Interpreter", line: int) -> Span:
    """The code on a line of the analysed document (its indentation and trailing blanks left out)."""
    lines = interp._home_state[0].lines
    text = lines[line] if 0 <= line < len(lines) else ""
    return Span(line, len(text) - len(text.lstrip()), line, len(text.rstrip()))


def _document_span(interp: "Interpreter", node: ast.AST) -> Span | None:
    """Where in the analysed document this node's code runs from: the node itself, or the call
    in the document that led into another module's code."""
    if interp.where is None:
        return interp.span(node)
    return interp.entry_span


def _where(interp: "Interpreter", node: ast.AST) -> str:
    return f"{interp.path or '<document>'}:{getattr(node, 'lineno', '?')}"


def statement_failed(interp: "Interpreter", stmt: ast.stmt, env: "Env", exc: Exception) -> None:
    """The statement raised (called from `Interpreter.exec_block`'s handler). A budget goes on
    up to its piece, marked with the innermost statement of the document it stopped in;
    nesting too deep or a bug gives up this statement only."""

    if isinstance(exc, interp_base.Budget):
        if getattr(exc, "at", None) is None and interp.where is None:
            exc.at = interp.span(stmt)  # type: ignore[attr-defined]
        raise exc
    if isinstance(exc, RecursionError):
        log.info("analysis incomplete at %s: nested too deeply to analyse", _where(interp, stmt))
        record(interp, _document_span(interp, stmt), "too-deep", TOO_DEEP)
    else:
        if strict():
            raise exc
        log.warning("analysis incomplete at %s: internal error %s: %s", _where(interp, stmt),
                    type(exc).__name__, exc)
        record(interp, _document_span(interp, stmt), "internal-error", internal_error(exc))
    forget_bindings(stmt, env)


def forget_bindings(stmt: ast.stmt, env: "Env") -> None:
    """The names a statement that gave up part-way binds are unknown after it (not the values
    it may have left: those were never proven). Names bound inside a nested function, class or
    comprehension are theirs, not the statement's scope's."""
    from wgmma_lsp.interpret.values import UNKNOWN

    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            env.vars[node.name] = UNKNOWN
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            env.vars[node.id] = UNKNOWN
        elif isinstance(node, ast.alias) and node.name != "*":
            env.vars[(node.asname or node.name).split(".")[0]] = UNKNOWN
        todo.extend(ast.iter_child_nodes(node))


TOO_DEEP = ("analysis incomplete: this code is nested too deeply for the analysis (Python's "
            "recursion limit); its value is unknown here and nothing is proven from it")


def internal_error(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return (f"analysis incomplete: not analysed here, an internal error in wgmma-lsp "
            f"({type(exc).__name__}{': ' + text[:200] if text else ''}); please report it")


def too_deep(interp: "Interpreter", node: ast.expr) -> "Value":
    """The expression could not be evaluated within Python's recursion limit (called from
    `Interpreter.eval`'s handler): its value is unknown, and the rest goes on."""
    from wgmma_lsp.interpret.values import UNKNOWN

    # (on the expression's line: how deep the stack was when it ran out varies from run to run)
    span = line_span(interp, node.lineno - 1) if interp.where is None else interp.entry_span
    if record(interp, span, "too-deep", TOO_DEEP):
        log.info("analysis incomplete at %s: nested too deeply to analyse", _where(interp, node))
    return UNKNOWN


def eval_binop_chain(interp: "Interpreter", n: ast.BinOp, env: "Env") -> "Value":
    """`a + b + c + ...` is a chain of BinOps nested down its left operands, as deep as it is
    long: evaluated bottom-up in a loop, each operator counted as a step and recorded (the
    right operands are evaluated as usual)."""
    spine = [n]
    while isinstance(spine[-1].left, ast.BinOp):
        spine.append(spine[-1].left)  # type: ignore[arg-type]
    value = interp.eval(spine[-1].left, env)
    for i, b in enumerate(reversed(spine)):
        if i < len(spine) - 1:
            interp.tick()  # the steps `eval` would have counted for the inner operators
        right = interp.eval(b.right, env)
        value = interp.binop(b.op, value, right, b)
        if not interp.silent and interp.where is None:  # (record's own test, before the call)
            interp.record(b, value)
    return value


class Pieces:
    """Runs the document piece by piece, each within its own step budget and all within the
    document's (see the module's docstring)."""

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp
        self.total = file_steps(len(interp.lines.lines))
        self.exhausted = False
        set_limit(interp, self.total)

    def run(self, span: Span | None, what: str, fn: Callable[[], Any]) -> None:
        """Run `fn` (the analysis of `what`, at `span` in the document) as one piece."""

        interp = self.interp
        if self.exhausted:
            return
        left = self.total - interp.steps
        if left <= 0:
            self._out_of_file_budget(span, what)
            return
        limit = interp.steps + min(piece_steps(), left)
        set_limit(interp, limit)
        saved = _State(interp)
        try:
            with RunScope(interp):  # each piece its own runs (interpret/followon.py)
                fn()
        except interp_base.Cancelled:
            raise
        except interp_base.Budget as e:
            saved.restore()
            at = getattr(e, "at", None) or span
            if limit >= self.total:
                self._out_of_file_budget(at, what)
            else:
                log.info("analysis incomplete: step budget of %s spent in %s (at %s:%s)",
                            f"{piece_steps():,}", what, interp.path or "<document>",
                            at.line + 1 if at is not None else "?")
                record(interp, at, "budget",
                       f"analysis incomplete: the step budget of {what} ({piece_steps():,} steps) "
                       f"ran out here; what follows in it was not checked")
        except RecursionError:
            saved.restore()
            log.info("analysis incomplete: %s is nested too deeply to analyse", what)
            record(interp, span, "too-deep", TOO_DEEP)
        except Exception as e:
            if strict():
                raise
            saved.restore()
            log.warning("analysis incomplete: internal error in %s: %s: %s", what, type(e).__name__, e)
            record(interp, span, "internal-error", internal_error(e))
        finally:
            set_limit(interp, self.total)

    def _out_of_file_budget(self, span: Span | None, what: str) -> None:
        self.exhausted = True
        log.info("analysis incomplete: the step budget of %s (%s steps) ran out in %s",
                    self.interp.path or "<document>", f"{self.total:,}", what)
        record(self.interp, span, "file-budget",
               f"analysis incomplete: the step budget of this file ({self.total:,} steps) ran out "
               f"here: this and the code still to be analysed after it were not checked")


_SCALARS = ("certain", "silent", "ctx", "sweep_depth", "observing", "iteration_born", "where", "lines",
            "path", "volatile", "entry_span", "kernel",
            "expecting_error", "sweep_start", "outside_writes", "uncertain_depth")
_STACKS = ("stack", "context", "handlers", "loops", "captures", "yield_sinks")


class _State:
    """The interpreter's state between pieces, put back after a piece that stopped part-way
    (whatever a `finally` on the way did not restore)."""

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp
        self.scalars = {a: getattr(interp, a) for a in _SCALARS if hasattr(interp, a)}
        self.stacks = {a: (getattr(interp, a), len(getattr(interp, a))) for a in _STACKS
                       if hasattr(interp, a)}
        self.smem_scopes = len(interp.kernel.smem_scopes)  # of the kernel state saved above

    def restore(self) -> None:
        for a, v in self.scalars.items():
            setattr(self.interp, a, v)
        for a, (lst, n) in self.stacks.items():
            del lst[n:]
            setattr(self.interp, a, lst)
        del self.interp.kernel.smem_scopes[self.smem_scopes:]

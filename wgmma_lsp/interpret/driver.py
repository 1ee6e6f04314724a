"""Runs the interpreter over a document: module code, declared entry points, then every
function not yet reached, analysed with nothing known about its arguments."""

from __future__ import annotations

import ast
import logging

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.interp import Budget, Interpreter
from wgmma_lsp.interpret.values import UNKNOWN, FuncVal, ShapeDtypeVal, TupleVal, Value
from wgmma_lsp.spans import LineIndex
from wgmma_lsp.syntax import parse
from wgmma_lsp.trace.entries import parse_entry_points

log = logging.getLogger("wgmma_lsp")
MAX_GENERIC_ROUNDS = 6


def run(source: str, path: str | None, resolve_with_jedi: bool = False) -> Analysis:
    """Analyse a document. With `resolve_with_jedi`, imports only jedi can resolve are resolved
    first (slow, for the CLI); otherwise they are listed in `Analysis.unresolved_imports`."""
    analysis = _run_once(source, path)
    if resolve_with_jedi and analysis.unresolved_imports and path:
        from wgmma_lsp.interpret.jedi_resolve import resolve_imports

        if resolve_imports(source, path, analysis.unresolved_imports):
            analysis = _run_once(source, path)
    return analysis


def _run_once(source: str, path: str | None) -> Analysis:
    parsed = parse(source)
    lines = LineIndex(source)
    interp = Interpreter(source, parsed.tree, lines, path)
    analysis = Analysis(source=source, path=path, syntax_errors=parsed.errors, lines=lines)
    try:
        interp.run_module()
        run_entry_points(interp, source)
        run_unreached(interp)
    except Budget:
        analysis.note = "analysis stopped early: step budget exhausted"
        log.info("step budget exhausted for %s", path)
    except RecursionError:
        analysis.note = "analysis stopped early: nesting too deep"
    analysis.findings = interp.findings
    analysis.record_source = interp.finish_records
    analysis.unresolved_imports = interp.unresolved
    return analysis


def run_entry_points(interp: Interpreter, source: str) -> None:
    """`# wgmma-lsp: trace f(bf16[64,64], ...)` lines name calls with example arguments.

    They are read as data (parsed, never executed): the call is interpreted abstractly."""
    for entry in parse_entry_points(source):
        try:
            node = ast.parse(entry.expression, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call):
            continue
        env = interp.module_env
        with interp.quiet():
            func = interp.eval(node.func, env)
            args = [_as_array(interp.eval(a, env)) for a in node.args]
            kwargs = {k.arg: _as_array(interp.eval(k.value, env)) for k in node.keywords if k.arg}
        if isinstance(func, FuncVal) or not isinstance(func, type(UNKNOWN)):
            interp.context.append(f"entry point `{entry.call}` (line {entry.line + 1 if entry.line is not None else '?'})")
            try:
                interp.call_value(func, Call(interp, None, args, kwargs, [None] * len(args), {}, env))
            finally:
                interp.context.pop()


def _as_array(v: Value) -> Value:
    if isinstance(v, ShapeDtypeVal):
        return v.array
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_as_array(x) for x in v.items), v.is_list)
    return v


def run_unreached(interp: Interpreter) -> None:
    for _ in range(MAX_GENERIC_ROUNDS):
        pending = [f for key, f in interp.defined.items() if key not in interp.entered]
        if not pending:
            return
        pending.sort(key=lambda f: (f.node.lineno, f.node.col_offset))
        for f in pending:
            if id(f.node) not in interp.entered:
                # A nested function nobody calls where we can see may never be traced: what it
                # does is possible, not proven. Module-level functions, and functions returned to
                # callers (a factory's kernel), are traced when called.
                nested = f.closure is not interp.module_env and id(f.node) not in interp.escaped
                with interp.uncertain(nested):
                    interp.generic_call(f)


def _spec_model(call: Call) -> Value:
    """`__wgmma_spec__(dtype_name, shape)`: a compact spec from an entry-point comment."""
    from wgmma_lsp.models.arrays import to_dtype
    from wgmma_lsp.interpret.values import ArrayVal, as_shape

    return ShapeDtypeVal(ArrayVal(as_shape(call.get(1)), to_dtype(call.get(0))))


def _install() -> None:
    from wgmma_lsp.models.registry import MODELS
    from wgmma_lsp.models.python import BUILTINS

    MODELS["builtins.__wgmma_spec__"] = _spec_model
    BUILTINS.add("__wgmma_spec__")


_install()

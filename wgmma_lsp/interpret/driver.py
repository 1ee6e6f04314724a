"""Runs the interpreter over a document: module code, declared entry points (comments), the
entry points the program makes itself (`__main__` blocks, tests with their parameters), each in
its own concrete context, then every function not yet reached, analysed with nothing known about
its arguments."""

from __future__ import annotations

import ast
import contextlib
import threading
from collections.abc import Iterator

from wgmma_lsp import kept_trees, logs
from wgmma_lsp.frame_room import roomy
from wgmma_lsp.analysis_types import Analysis
from wgmma_lsp.entry.config_contexts import ConfigContext, config_contexts, providers
from wgmma_lsp.entry.context import Context, contexts_note
from wgmma_lsp.entry.discover import MAX_CASES, discover
from wgmma_lsp.entry.test_contexts import run_case, run_package_tests, uses_mosaic_gpu
from wgmma_lsp.interpret.ast_walk import CHILDLESS, push_children
from wgmma_lsp.interpret import axis_env, followon, forced_interpret
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.kernel_reach import kernels_of
from wgmma_lsp.interpret.incomplete import Pieces, record, strict
from wgmma_lsp.interpret.interp import CURRENT_CANCEL, Budget, Cancelled, Interpreter, _informative, is_driver
from wgmma_lsp.interpret.values import (UNKNOWN, ClassVal, Const, FuncVal, Opaque, ShapeDtypeVal, TupleVal, Value,
                                        next_born)
from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.rules.base import Related
from wgmma_lsp.spans import LineIndex, Span
from wgmma_lsp.syntax import ORPHAN_PREFIX, TOO_DEEP
from wgmma_lsp.entry.declared import parse_entry_points

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

log = logs.logger()
MAX_GENERIC_ROUNDS = 6
#: Test cases the budget left out that the hover pass may run for lines still without a value.
MAX_HOVER_TEST_CASES = 1


@roomy  # its frames in a chunk of their own (frame_room.py)
def run(source: str, path: str | None, resolve_with_jedi: bool = False,
        cancel: threading.Event | None = None) -> Analysis:
    """Analyse a document. With `resolve_with_jedi`, imports only jedi can resolve are resolved
    first (slow, for the CLI); otherwise they are listed in `Analysis.unresolved_imports`.

    `cancel`, set from another thread, stops the analysis at its next checkpoint (raising
    `Cancelled`): a newer version of the document is waiting."""
    previous = getattr(CURRENT_CANCEL, "event", None)
    CURRENT_CANCEL.event = cancel  # interpreters of the user's other modules check it too
    try:
        # The document's code runs outside any transformation: no axis name is bound (a
        # generic call, with unknown callers, runs with the names unknown: interp_calls.py).
        # Nor is JAX's interpret mode forced (interpret/forced_interpret.py); a
        # `set_gpu_interpret_mode` the code calls lasts until the analysis ends.
        with axis_env.bound(frozenset()), forced_interpret.forced(False):
            return _run(source, path, resolve_with_jedi, cancel)
    finally:
        CURRENT_CANCEL.event = previous


def _run(source: str, path: str | None, resolve_with_jedi: bool,
         cancel: threading.Event | None) -> Analysis:
    analysis = _run_once(source, path, cancel)
    if resolve_with_jedi and analysis.unresolved_imports and path:
        from wgmma_lsp.interpret.jedi_resolve import resolve_imports

        if resolve_imports(source, path, analysis.unresolved_imports):
            analysis = _run_once(source, path, cancel)
    return analysis


def _run_once(source: str, path: str | None, cancel: threading.Event | None = None) -> Analysis:
    parsed = kept_trees.document(source, path)  # (`check`: the tree a module import parsed)
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    lines = LineIndex(source)
    interp = Interpreter(source, parsed.tree, lines, path, cancel=cancel)
    analysis = Analysis(source=source, path=path, syntax_errors=parsed.errors, lines=lines)
    # Module code runs as imported: `if __name__ == "__main__":` blocks are entry points.
    interp.module_env.vars["__name__"] = Const("__wgmma_lsp_module__")
    # In pieces, each with its own step budget (interpret/incomplete.py): a big file's last
    # function is analysed as its first is, and where a piece stops short says so (WG904).
    pieces = Pieces(interp)
    for span, msg in parsed.errors:
        if msg == TOO_DEEP:  # a statement Python's parser could not take: it is not analysed
            record(interp, span, "too-deep", "analysis incomplete: this statement is nested too deeply "
                   "for Python's parser (it cannot be compiled either); it was not analysed")
    try:
        for stmt in parsed.tree.body:
            pieces.run(_line_span(interp, stmt.lineno - 1), "the module's code",
                       lambda stmt=stmt: interp.exec_block([stmt], interp.module_env))
        interp.memo_enabled = True  # module-level names keep their values from here on
        interp.shared_born = next_born()  # (module code's lists are the contexts' shared state)
        ran = getattr(interp.importer, "module_ran", None)
        if ran is not None:  # (a program session: the analysed module is importable as it is now)
            ran(interp.module_env.vars)
        run_entry_points(interp, source, pieces)
        run_discovered(interp, pieces)
        run_package_tests(interp, pieces)  # library code: its package's tests (entry/test_contexts.py)
        if parsed.repaired:
            run_drivers_of_a_broken_main_block(interp, pieces)
        run_unreached(interp, pieces)
    except Cancelled:
        raise
    except Budget:  # (steps are taken in pieces: a safety net)
        log.info("analysis incomplete for %s: step budget spent between pieces", path)
        record(interp, _line_span(interp, 0), "file-budget", "analysis incomplete: the step budget "
               "of this file ran out; some of its code was not checked")
    except RecursionError:  # outside any piece (the discovery of entry points, say)
        log.info("analysis incomplete for %s: nested too deeply to discover its entry points", path)
        record(interp, _line_span(interp, 0), "too-deep",
               "analysis incomplete: this file is nested too deeply to find its entry points; "
               "some of its code was not checked")
    complete = not pieces.exhausted
    if interp.incomplete:
        analysis.note = interp.incomplete[0].message
    label_contexts(interp)
    analysis.findings = interp.findings
    analysis.notes = list(interp.notes)
    analysis.incomplete = list(interp.incomplete)
    analysis.smem = dict(interp.smem_usage)
    analysis.barriers = dict(getattr(interp, "barrier_uses", {}))
    analysis.sweeps = list(interp.sweep_checked)
    analysis.kernels = kernels_of(interp)  # which kernels had concrete shapes (kernel_reach.py)
    analysis.record_source = (lambda: _records_with_hover_pass(interp)) if complete \
        else interp.finish_records
    analysis.unresolved_imports = interp.unresolved
    return analysis


def run_entry_points(interp: Interpreter, source: str, pieces: Pieces) -> None:
    """`# wgmma-lsp: trace f(bf16[64,64], ...)` lines name calls with example arguments.

    They are read as data (parsed, never executed): the call is interpreted abstractly."""
    for entry in parse_entry_points(source):
        try:
            node = ast.parse(entry.expression, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, ast.Call):
            line = entry.line if entry.line is not None else 0
            pieces.run(_line_span(interp, line), f"entry point `{entry.call}`",
                       lambda node=node, entry=entry, line=line: _run_entry_point(interp, node, entry.call, line))


def _run_entry_point(interp: Interpreter, node: ast.Call, text: str, line: int) -> None:
    env = interp.module_env
    with interp.quiet():
        func = interp.eval(node.func, env)
        args = [_as_array(interp.eval(a, env)) for a in node.args]
        kwargs = {k.arg: _as_array(interp.eval(k.value, env)) for k in node.keywords if k.arg}
    if isinstance(func, FuncVal) or not isinstance(func, type(UNKNOWN)):
        ctx = Context(f"entry point `{text}`", line, span=_line_span(interp, line), open=False)
        interp.context.append(f"entry point `{text}` (line {line + 1})")
        try:
            with interp.in_context(ctx):
                interp.call_value(func, Call(interp, None, args, kwargs, [None] * len(args), {}, env))
        finally:
            interp.context.pop()


def run_discovered(interp: Interpreter, pieces: Pieces) -> None:
    """`__main__` blocks and test functions, each parameter set its own context. The tests a
    class inherits that the budget left out are said once per class, at the class."""
    # id(class statement) -> [the statement, sets checked, sets in all, tests, sets listed]
    inherited: dict[int, list] = {}
    instances = uses_mosaic_gpu(interp)  # (whether unittest tests run with their instance: _run_test)
    for site in discover(interp.tree):
        if site.kind == "test" and site.inherited and site.class_node is not None:
            counts = inherited.setdefault(id(site.class_node), [site.class_node, 0, 0, 0, 0])
            counts[2] += len(site.cases) + site.dropped
            counts[3] += 1
            counts[4] += len(site.cases)
        span = _line_span(interp, site.line)
        if site.kind == "main-block":
            assert isinstance(site.node, ast.If)

            def block(site=site, span: Span = span) -> None:
                with interp.in_context(Context(site.name, site.line, span=span)), followon.Untraced(interp):
                    interp.exec_block(site.node.body, interp.module_env)
            pieces.run(span, "the __main__ block", block)
            continue
        func = interp.defined.get(id(site.node))
        if func is None:
            continue
        pieces.run(span, f"`{site.name}`",
                   lambda site=site, func=func, span=span: _run_test(interp, site, func, span, inherited,
                                                                       instances))
    for node, done, total, tests, listed in inherited.values():
        if done < total:
            why = " and ".join(w for w, cut in (("the analysis budget", done < listed),
                                                (f"the limit of {MAX_CASES} per test", listed < total)) if cut)
            msg = (f"checked {done} of {total} parameter sets of the {tests} test{'s' if tests != 1 else ''} "
                   f"{node.name} inherits; {why} left out the others")
            log.info("line %d: %s", node.lineno, msg)
            interp.notes.append((_line_span(interp, node.lineno - 1), msg))


def _run_test(interp: Interpreter, site: Any, func: FuncVal, span: Span,
              inherited: dict[int, list], instances: bool) -> None:
    """A test function, each of its parameter sets in its own context. A method of a unittest
    `TestCase` runs as its runner runs it (entry/test_contexts.run_case: the class instantiated,
    `setUp`, the method with the instance), or, where the interpreter cannot make the instance,
    with an unknown `self`, as a plain class's test method and a pytest function run here. Only
    in a document that binds Mosaic GPU's API (`instances`: `uses_mosaic_gpu`, as for the
    package's tests): elsewhere — Pallas TPU tests, tokamax's other backends' — the instance's `setUp` and helpers
    reach no Mosaic GPU rule, and running them cost the whole-tokamax `check` 14% more CPU."""
    cls = _test_class(interp, site) if site.unittest and instances else None
    done = 0
    for case in site.cases:
        # Parameter sets share the sweeps' step budget; each test's first set always runs (a
        # test a class inherits runs in it within the budget only: its first run is the
        # defining class's).
        if (done or site.inherited) and interp.sweep_steps >= interp.sweep_budget:
            break
        start = interp.steps
        ctx = Context(site.name, site.line, tuple(case.label), span=span)
        if cls is not None:
            run_case(interp, ctx, func.name, case, cls, func,
                     no_instance=lambda args, kwargs: _call_test(interp, site, func, args, kwargs))
        else:
            env = interp.module_env
            with interp.quiet():
                args = [interp.eval(a, env) for a in case.args]
                kwargs = {k: interp.eval(v, env) for k, v in case.kwargs}
            with interp.in_context(ctx), followon.Untraced(interp, followon.plain_test(func.node)):
                _call_test(interp, site, func, args, kwargs)
        interp.sweep_steps += interp.steps - start
        done += 1
    total = len(site.cases) + site.dropped
    if site.inherited and site.class_node is not None:
        inherited[id(site.class_node)][1] += done  # (said once for the class: run_discovered)
        return
    if done < total:
        # (every set listed ran: the rest were never listed — `discover` lists at most MAX_CASES
        # per test, in every sweep mode — not left out by the budget)
        why = "the analysis budget left out the others" if done < len(site.cases) else \
            f"at most {MAX_CASES} are checked per test"
        msg = f"checked {done} of {total} parameter sets of this test; {why}"
        log.info("line %d: %s", site.line + 1, msg)
        interp.notes.append((span, msg))


def _call_test(interp: Interpreter, site: Any, func: FuncVal, args: list[Value],
               kwargs: dict[str, Value]) -> None:
    """The test function called with the case's arguments (a method: with an unknown `self`),
    in the context entered, as untraced code (`run_case` and `_run_test` enter both)."""
    if site.method:
        args = [Opaque("self"), *args]
    interp.call_user(func, Call(interp, None, args, kwargs, [None] * len(args), {}, interp.module_env))


def _test_class(interp: Interpreter, site: Any) -> Value:
    """The class a test method runs in, as the module made it; unknown when the name is bound to
    something else (a class decorator the analysis does not follow made it unknown, say)."""
    cls = interp.module_env.vars.get(site.cls, UNKNOWN)
    return cls if isinstance(cls, ClassVal) and cls.node is site.class_node else UNKNOWN


def run_drivers_of_a_broken_main_block(interp: Interpreter, pieces: Pieces) -> None:
    """A file that does not parse, with a `__main__` block, whose drivers (`main()`) nothing
    reached: the block is what is broken (a line of it half typed). Each driver runs as the block
    would run it, in the block's context, so that the file is analysed as it is with the block
    whole (its tuning sweep as a sweep, its kernels in their concrete contexts) rather than
    every function with nothing known."""
    at = next((i for i, text in enumerate(interp.lines.lines) if _MAIN_GUARD.match(text)), None)
    if at is None:
        return
    # Lines of the drivers defined at module level: a broken block inside one (a loop whose
    # header does not parse) is the driver's own code, run as the driver would run it.
    driver_lines = [(n.lineno, n.end_lineno or n.lineno) for n in interp.tree.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_driver(n.name)]

    def in_block(f: FuncVal) -> bool:
        """The block's own lines that broke (see syntax.py: its header, or lines indented too
        deep): they run first, as the block would run them; then the drivers they did not reach."""
        return f.name.startswith(ORPHAN_PREFIX) and f.closure is interp.module_env and f.node.lineno > at

    def driver(f: FuncVal) -> bool:
        if not f.name.startswith(ORPHAN_PREFIX):
            return f.closure is interp.module_env and is_driver(f.name)
        if f.closure is not interp.module_env:
            return any(a < f.node.lineno <= b for a, b in driver_lines)
        header = _DEF_NAME.match(interp.lines.lines[f.node.lineno - 1])  # a `def main(` half typed
        return header is not None and is_driver(header.group(1))
    drivers = [f for key, f in interp.defined.items() if (in_block(f) or driver(f)) and key not in interp.entered]
    drivers.sort(key=lambda f: (not in_block(f), f.node.lineno, f.node.col_offset))
    for f in drivers:
        if id(f.node) in interp.entered:
            continue
        # (a block of a driver that broke may have sat inside a `try` or under a condition of
        # the driver's: what it does is possible, not proven)
        def drive(f: FuncVal = f) -> None:
            with interp.in_context(Context("the __main__ block", at, span=_line_span(interp, at))), \
                    interp.uncertain(f.closure is not interp.module_env):
                interp.generic_call(f)
        pieces.run(_line_span(interp, f.node.lineno - 1), "the __main__ block", drive)


_DEF_NAME = LazyPattern(r"(?:async\s+)?def\s+(\w+)")
_MAIN_GUARD = LazyPattern(r"\s*if\s+__name__\s*==\s*['\"]__main__['\"]")


def _has_unvisited_names(interp: Interpreter, node: ast.AST) -> bool:
    """Does the function contain a name no analysis has given a (full) value yet?"""
    recorded = interp._records
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            entry = recorded.get(id(n))
            if entry is None or not any(_informative(v) for v in entry[3]):
                return True
    return False


def _has_unreached_names(interp: Interpreter, node: ast.AST) -> bool:
    """Does the function contain a name no analysis reached (code no context ran)?"""
    recorded = interp._records
    return any(isinstance(n, ast.Name) and id(n) not in recorded for n in ast.walk(node))


def _has_flags(f: FuncVal) -> bool:
    """Does the function have a parameter whose default is a bool?"""
    defaults = list(f.defaults) + list(f.kw_defaults.values())
    return any(isinstance(d, Const) and isinstance(d.value, bool) for d in defaults)


def _line_span(interp: Interpreter, line: int) -> Span:
    text = interp.lines.lines[line] if 0 <= line < len(interp.lines.lines) else ""
    start = len(text) - len(text.lstrip())
    return Span(line, start, line, len(text.rstrip()))


def label_contexts(interp: Interpreter) -> None:
    """A finding proven in only some of the concrete contexts that reach its code says which.
    (An analysis with nothing known that reached the code too, without proving it, does not
    make the concrete contexts it was proven in less worth naming.)"""
    for f in interp.findings:
        if not f.contexts or None in f.contexts or f.owner is None:
            continue
        reached = interp.ctx_entered.get(f.owner, set()) - {None}
        if set(f.contexts) >= reached:
            continue
        contexts = sorted(f.contexts, key=lambda c: (c.line, _natural(c.bindings)))
        f.context_note = contexts_note(contexts)
        for c in contexts[:3]:
            if c.span is not None:
                f.related.append(Related(c.span, f"proven in this context: {c.label()}"))


def _natural(bindings: tuple[tuple[str, str], ...]) -> tuple:
    """Bindings in the order a reader expects: numbers by value (`64` before `128`)."""
    def key(text: str) -> tuple:
        try:
            return (0, float(text), "")
        except ValueError:
            return (1, 0.0, text)
    return tuple((name, key(text)) for name, text in bindings)


def _as_array(v: Value) -> Value:
    if isinstance(v, ShapeDtypeVal):
        return v.array
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_as_array(x) for x in v.items), v.is_list)
    return v


def _named_by_others(funcs: list[FuncVal], names_in: dict[int, frozenset[str]]) -> set[int]:
    """The functions (node ids) whose name appears in another one's body (`names_in`: each
    function's names, walked once per analysis)."""
    by_name: dict[str, list[FuncVal]] = {}
    for f in funcs:
        if not isinstance(f.node, ast.Lambda):
            by_name.setdefault(f.node.name, []).append(f)
    out: set[int] = set()
    if not by_name:
        return out
    for f in funcs:
        names = function_names(f.node, names_in)
        for name in names & by_name.keys():
            out.update(id(g.node) for g in by_name[name] if g.node is not f.node)
    return out


def function_names(node: ast.AST, names_in: dict[int, frozenset[str]]) -> frozenset[str]:
    """The names a function's (or lambda's) subtree uses: `ast.walk(node)`'s `Name`s. Each
    function is walked once: a nested function's names are taken from `names_in` (filled on the
    way), not walked again for every function around it."""
    got = names_in.get(id(node))
    if got is not None:
        return got
    own: set[str] = set()
    stack: list[Any] = [node]
    kinds = _NAME_KINDS
    while stack:
        n = stack.pop()
        kind = kinds.get(type(n))
        if kind is None:
            kind = _name_kind(n)
        if kind is _NAME:
            own.add(n.id)
            continue  # (a Name holds no other Name)
        if kind is _FUNCTION:
            if n is not node:
                own |= function_names(n, names_in)  # (recursion as deep as functions nest)
                continue
        elif kind is _LEAF:
            continue
        push_children(stack, n)
    names_in[id(node)] = got = frozenset(own)
    return got


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LEAVES = CHILDLESS  # nodes that hold no Name: not walked into
_NAME, _FUNCTION, _LEAF, _OTHER = "name", "function", "leaf", "other"
_NAME_KINDS: dict[type, str] = {}  # a node type -> what function_names does with it


def _name_kind(n: Any) -> str:
    if isinstance(n, ast.Name):
        kind = _NAME
    elif isinstance(n, _FUNCTIONS):
        kind = _FUNCTION
    elif isinstance(n, _LEAVES):
        kind = _LEAF
    else:
        kind = _OTHER
    _NAME_KINDS[type(n)] = kind
    return kind


def run_unreached(interp: Interpreter, pieces: Pieces) -> None:
    names_in: dict[int, frozenset[str]] = {}
    found: list[set[int]] = []

    def single() -> set[int]:
        """The functions returning one of the user's config classes: their results are the
        configs kernels are run with (entry/config_contexts.py), so their loops run in full."""
        if not found:
            found.append({id(f.node) for f, _ in providers(interp)})
        return found[0]
    for _ in range(MAX_GENERIC_ROUNDS):
        pending = [f for key, f in interp.defined.items() if key not in interp.entered]
        if not pending:
            return
        # Callers first: a function another pending one names (a kernel body its entry point
        # hands to `plgpu.kernel`) is analysed from there, with what the caller knows, before it
        # would be run with nothing known.
        called = _named_by_others(pending, names_in)
        pending.sort(key=lambda f: (id(f.node) in called, f.node.lineno, f.node.col_offset))
        for f in pending:
            if id(f.node) not in interp.entered:
                # A nested function nobody calls where we can see may never be traced: what it
                # does is possible, not proven. Module-level functions, and functions returned to
                # callers (a factory's kernel), are traced when called.
                nested = f.closure is not interp.module_env and id(f.node) not in interp.escaped
                span = _line_span(interp, f.node.lineno - 1)
                configs: list[ConfigContext] = []
                total = [0]

                def analyse(f: FuncVal = f, nested: bool = nested, configs: list = configs,
                            total: list = total) -> None:
                    # A library's kernel entry taking a config: run with the configs the
                    # module picks (entry/config_contexts.py), else with nothing known.
                    found, total[0] = config_contexts(interp, f) if not nested else ([], 0)
                    configs.extend(found)
                    if configs:
                        start = interp.steps
                        _run_with_config(interp, f, configs[0])
                        interp.sweep_steps += interp.steps - start
                        return
                    with interp.uncertain(nested), _unroll_capped(interp, f, id(f.node) not in single()):
                        interp.generic_call(f)
                pieces.run(span, f"`{f.name}`", analyse)
                if configs:
                    _run_other_configs(interp, pieces, f, configs, total[0], span)
                if pieces.exhausted:
                    return


#: How many times a nest of short loops may run its innermost body, unrolled, in a function
#: analysed with nothing known (interp_loops.py `_nest_too_big`).
UNROLL_CAP = 16


@contextlib.contextmanager
def _unroll_capped(interp: Interpreter, f: FuncVal, capped: bool) -> Iterator[None]:
    """A function no context reached, analysed with nothing known: its nests of short loops are
    unrolled up to `UNROLL_CAP` runs of their innermost body, loops of unknown trip count
    beyond. What such a nest computes (a module's autotuning configs, enumerated) is not an
    argument of any context, so enumerating it proves nothing a joined loop does not; it cost
    nine tenths of the analysis of tokamax's GLU kernel module. A function whose run joined a
    nest is noted in `interp.capped`: the hover pass, which picks a few of a module's autotuning
    configs from what such a function returns (entry/tuning_contexts.py), runs it again in full.
    Not `capped`: no cap (a function returning a config, which kernels are run with)."""
    if not capped:
        yield
        return
    saved = interp.unroll_cap, interp.unroll_weight, interp.unroll_joined
    interp.unroll_cap, interp.unroll_weight, interp.unroll_joined = UNROLL_CAP, 1, False
    try:
        yield
    finally:
        if interp.unroll_joined:
            interp.capped.add(id(f.node))
        interp.unroll_cap, interp.unroll_weight, interp.unroll_joined = saved


def _run_other_configs(interp: Interpreter, pieces: Pieces, f: FuncVal, configs: list[ConfigContext],
                       total: int, span: Span) -> None:
    """The configs after the first (which always runs), each a piece, within the step budget
    that sweeps and test parameter sets share (interpret/sweep_budget.py: in the editor, steps
    per line; `wgmma-lsp check`, every one); those left out are said in a WG903 note."""
    done = 1
    for c in configs[1:]:
        if pieces.exhausted or interp.sweep_steps >= interp.sweep_budget:
            break
        start = interp.steps
        pieces.run(span, f"`{c.context.origin}`", lambda c=c: _run_with_config(interp, f, c))
        interp.sweep_steps += max(0, interp.steps - start)
        done += 1
    if done < total:
        msg = (f"checked {done} of {total} configs `{f.name}` is given here; the analysis budget "
               "left out the others")
        log.info("line %d: %s", f.node.lineno, msg)
        interp.notes.append((span, msg))


def _run_with_config(interp: Interpreter, f: FuncVal, c: ConfigContext) -> None:
    """`f(config=<the config>)`, its other arguments unknown, in the config's context."""
    with interp.in_context(c.context):
        interp.call_user(f, Call(interp, None, [], {c.param: c.config}, generic=True))


def _records_with_hover_pass(interp: Interpreter) -> dict:
    """Recorded values for hovers: the hover pass runs on first use, not on every keystroke
    (diagnostics do not need it). The analysis is finished: a newer document no longer stops it."""
    interp.cancel = None
    previous = getattr(CURRENT_CANCEL, "event", None)
    CURRENT_CANCEL.event = None  # nor the user's modules it may interpret on the way
    try:
        with axis_env.bound(frozenset()), forced_interpret.forced(False):  # (as in `run`)
            hover_pass(interp)
    except (Budget, RecursionError):
        log.info("hover pass stopped early for %s", interp.path)
    except Exception as e:  # hovers only (diagnostics are out): said, not hidden; raised in strict mode
        if strict():
            raise
        log.warning("hover pass stopped by an internal error for %s: %s: %s", interp.path, type(e).__name__, e)
    finally:
        CURRENT_CANCEL.event = previous
    return interp.finish_records()


@roomy
def hover_pass(interp: Interpreter) -> None:
    """Module-level functions reached only in concrete contexts, once more with nothing known:
    lines no context reached (a branch on another config) still get symbolic hovers."""
    only_in_contexts = [f for key, f in interp.defined.items()
                        if f.closure is interp.module_env and key in interp.ctx_entered
                        and None not in interp.ctx_entered[key]
                        and not is_driver(f.name) and not f.name.startswith("test")]
    only_in_contexts = [f for f in only_in_contexts if _has_unvisited_names(interp, f.node)]
    only_in_contexts.sort(key=lambda f: (f.node.lineno, f.node.col_offset))
    if not only_in_contexts:
        return
    interp.hover_only = True
    interp.hover_kept = {key for key, entry in interp._records.items() if any(map(_informative, entry[3]))}
    interp.hover_memo = {}
    entered, interp.entered = interp.entered, set()  # "already analysed" means in a context
    try:
        for f in only_in_contexts:
            with interp.in_context(None):
                interp.generic_call(f)
        # Lines still without a hover may sit behind a config field every context shared (an
        # `else:` of `if config.wg_dimension == N:`): a few of the module's autotuning configs
        # (entry/tuning_contexts.py).
        for f in only_in_contexts:
            if _has_unvisited_names(interp, f.node):
                _run_tuning_configs(interp, f, entered)
        # Lines still without a hover may sit behind a flag's default (`if transpose_rhs:`):
        # once more with the flags' defaults flipped.
        interp.flip_flags = True
        for f in only_in_contexts:
            if _has_flags(f) and _has_unvisited_names(interp, f.node):
                interp.entered.discard(id(f.node))
                with interp.in_context(None):
                    interp.generic_call(f)
        interp.flip_flags = False
        # Lines still without a hover may sit behind a test case the budget left out (tokamax's
        # attention: the causal mask's code, reached by `test_causal_mask` only).
        _run_more_test_cases(interp, only_in_contexts)
    finally:
        interp.hover_only = False
        interp.hover_kept = set()
        interp.hover_memo = None
        interp.flip_flags = False
        interp.entered = entered | interp.entered


def _run_more_test_cases(interp: Interpreter, functions: list[FuncVal]) -> None:
    """The package's test cases the analysis' budget left out, for hovers only, while a function
    of `functions` still has code no context reached: one at a time, each time the case whose
    test method's name (then its code and parameters) mentions the most words of the conditions
    guarding such names (`if is_causal:`: `test_causal_mask`), at most MAX_HOVER_TEST_CASES,
    none that mentions none. Each has a piece's step budget (one that runs out ends that case,
    not the hover pass). Their findings are not reported: the budget left these cases out of
    the diagnostics (`wgmma-lsp check` runs them all)."""
    from wgmma_lsp.entry.test_contexts import words_of
    from wgmma_lsp.interpret.incomplete import piece_steps, set_limit

    remaining, interp.unrun_test_cases = list(interp.unrun_test_cases), []
    for _ in range(MAX_HOVER_TEST_CASES):
        waiting = [f for f in functions if _has_unreached_names(interp, f.node)]
        guards = _guard_words(interp, waiting) if remaining and waiting else set()
        if not guards:
            return
        # The test's name says most of what it is for (the more of its words guard, the more it
        # is about them); then what its code and parameters mention; then the order the cases
        # would have run in.
        scores = []
        for i, c in enumerate(remaining):
            name = words_of(c.case.method)
            hits = len(name & guards)
            scores.append((hits, hits / len(name) if name else 0.0, len(c.words() & guards), -i))
        best = max(range(len(remaining)), key=scores.__getitem__)
        if scores[best][0] == 0 and scores[best][2] == 0:
            return
        case = remaining.pop(best)
        for f in waiting:
            interp.entered.discard(id(f.node))
        set_limit(interp, interp.steps + piece_steps())
        try:
            case.run(interp)
        except Cancelled:
            raise
        except Budget:
            log.info("hover pass: %s stopped by the step budget", case.label)


def _guard_words(interp: Interpreter, functions: list[FuncVal]) -> set[str]:
    """The words of the identifiers in the tests of the `if`s, `while`s and conditional
    expressions that guard a name no analysis reached (entry/test_contexts.words_of)."""
    from wgmma_lsp.entry.test_contexts import words_of

    recorded = interp._records
    out: set[str] = set()
    for f in functions:
        parents: dict[int, ast.AST] = {}
        for p in ast.walk(f.node):
            for c in ast.iter_child_nodes(p):
                parents[id(c)] = p
        seen: set[int] = set()
        for n in ast.walk(f.node):
            if not isinstance(n, ast.Name) or id(n) in recorded:
                continue
            child, p = n, parents.get(id(n))
            while p is not None and id(p) not in seen:
                if isinstance(p, (ast.If, ast.While, ast.IfExp)) and child is not p.test:
                    seen.add(id(p))
                    for t in ast.walk(p.test):
                        if isinstance(t, ast.Name):
                            out |= words_of(t.id)
                        elif isinstance(t, ast.Attribute):
                            out |= words_of(t.attr)
                child, p = p, parents.get(id(p))
    return out


def _run_tuning_configs(interp: Interpreter, f: FuncVal, entered: set[int]) -> None:
    """`f` with a few of its module's autotuning configs, for hovers only, each with a piece's
    step budget (one that runs out ends that config's run, not the hover pass). `entered`: the
    functions the analysis ran (the providers' results are read from that run, not rerun)."""
    from wgmma_lsp.entry.tuning_contexts import tuning_contexts
    from wgmma_lsp.interpret.incomplete import piece_steps, set_limit

    # A provider whose run with nothing known joined a nest of loops (`_unroll_capped`) runs
    # again, in full, with a piece's step budget of its own.
    in_hover_pass, interp.entered = interp.entered, (entered - interp.capped) | interp.entered
    set_limit(interp, interp.steps + piece_steps())
    try:
        already = [c.config for c in config_contexts(interp, f)[0]]
        contexts = tuning_contexts(interp, f, already)
    except Budget:
        log.info("hover pass: the autotuning configs for %s were not listed within the step budget", f.name)
        contexts = []
    finally:
        interp.entered = in_hover_pass
    for c in contexts:
        if not _has_unvisited_names(interp, f.node):
            return
        interp.entered.discard(id(f.node))
        set_limit(interp, interp.steps + piece_steps())
        try:
            _run_with_config(interp, f, c)
        except Cancelled:
            raise
        except Budget:
            log.info("hover pass: %s with %s stopped by the step budget", f.name, c.context.label())


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

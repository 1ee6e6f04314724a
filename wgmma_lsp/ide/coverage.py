"""Hover coverage: how many ref and array names inside kernel bodies show a known aval.

**Kernel bodies** are the functions that run under a kernel trace, found from the syntax alone
(not from what the analyzer managed to follow):

- a function passed (by name, directly or inside `functools.partial(...)`, or as a lambda) to a
  JAX API that traces it inside a kernel: `pallas_call`, `plgpu.kernel`, `pl.run_scoped`,
  `pl.run_state`, `pl.core_map`, `plgpu.emit_pipeline`, `plgpu.emit_pipeline_warp_specialized`,
  `plgpu.nd_loop`, `pl.loop`, `lax.fori_loop`, `lax.cond`, `pl.when`, … — or decorated with one;
- every function defined inside a kernel body, and every function of the file a kernel body
  calls or passes on by name (transitively).

**Ref and array names** are the occurrences of names (reads, assignments and parameters) in
those functions that hold a JAX array or ref while JAX traces the file: the caller supplies
that set, observed from real JAX (see `tests/shipped_harness.py: runtime_arrays`), so the
analyzer's own knowledge never decides what counts. Occurrences on lines JAX did not run while
tracing (a branch the traced config does not take) are left out.

A name is **covered** when the value recorded at exactly its span is an array or ref whose
shape and dtype are known (symbolic sizes such as `tile_m` count; `?` does not); when the
analyzer saw several values (several call contexts), each must be known. A Python number
beside a known array counts as known: the name holds a plain number in some calls (a peeled
first step `device_step(ref, 0)`) and a traced array in others (`pl.loop`'s index); JAX sees
the number there as a weakly typed scalar, and the hover shows its value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.interpret.values import ArrayVal, Const, RefVal, SymInt

#: APIs (by their last attribute name) that trace the functions passed to them in a kernel.
TRACING_APIS = frozenset({
    "pallas_call", "kernel", "run_scoped", "run_state", "core_map", "emit_pipeline",
    "emit_pipeline_warp_specialized", "nd_loop", "loop", "fori_loop", "while_loop", "cond",
    "switch", "scan", "when", "dynamic_scheduling_loop", "map",
})

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def first_line(fn: FuncNode) -> int:
    """The line Python reports as the function's first (its first decorator's, if any)."""
    if not isinstance(fn, ast.Lambda) and fn.decorator_list:
        return min(d.lineno for d in fn.decorator_list)
    return fn.lineno


def _api_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_tracing_call(call: ast.Call) -> bool:
    name = _api_name(call.func)
    if name in TRACING_APIS:
        return True
    # functools.partial(pl.run_scoped, ...): the partial of a tracing API
    if name == "partial" or (isinstance(call.func, ast.Name) and call.func.id == "partial"):
        return bool(call.args) and _api_name(call.args[0]) in TRACING_APIS
    return False


def _mentions_tracing_api(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and _is_tracing_call(n) or
               isinstance(n, ast.Attribute) and n.attr in TRACING_APIS for n in ast.walk(node))


def kernel_body_functions(tree: ast.Module) -> list[FuncNode]:
    """The functions of a module that run under a kernel trace (see the module docstring)."""
    funcs: list[FuncNode] = [n for n in ast.walk(tree)
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    by_name: dict[str, list[FuncNode]] = {}
    for f in funcs:
        if not isinstance(f, ast.Lambda):
            by_name.setdefault(f.name, []).append(f)
    selected: dict[int, FuncNode] = {}
    work: list[FuncNode] = []

    def add(f: FuncNode) -> None:
        if id(f) not in selected:
            selected[id(f)] = f
            work.append(f)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_tracing_call(node):
            for arg in list(node.args) + [k.value for k in node.keywords]:
                for sub in ast.walk(arg):
                    if isinstance(sub, ast.Name):
                        for f in by_name.get(sub.id, ()):
                            add(f)
                    elif isinstance(sub, ast.Lambda):
                        add(sub)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_mentions_tracing_api(d) for d in node.decorator_list):
                add(node)
    while work:
        f = work.pop()
        for sub in ast.walk(f):
            if sub is f:
                continue
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                add(sub)
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                for g in by_name.get(sub.id, ()):
                    add(g)
    return sorted(selected.values(), key=lambda f: (f.lineno, f.col_offset))


def own_names(fn: FuncNode) -> list[tuple[ast.Name | ast.arg, tuple[int, int]]]:
    """Parameters and name occurrences of a function, not those of functions nested in it
    (decorators and defaults of nested functions belong to this one), each with the lines of the
    statement it belongs to (a compound statement's header only)."""
    def_line = (fn.lineno, fn.lineno)
    out: list[tuple[ast.Name | ast.arg, tuple[int, int]]] = []
    a = fn.args
    out.extend((p, def_line) for p in list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs)
               + [p for p in (a.vararg, a.kwarg) if p is not None])
    body = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    stack: list[tuple[ast.AST, tuple[int, int]]] = [(n, def_line) for n in reversed(body)]
    while stack:
        n, lines = stack.pop()
        if isinstance(n, ast.stmt):
            compound = any(isinstance(getattr(n, f, None), list) and getattr(n, f)
                           and isinstance(getattr(n, f)[0], ast.stmt)
                           for f in ("body", "orelse", "finalbody", "handlers"))
            lines = (n.lineno, n.lineno if compound else (n.end_lineno or n.lineno))
        if isinstance(n, ast.Name):
            out.append((n, lines))
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend((d, lines) for d in n.decorator_list)
            stack.extend((d, lines) for d in n.args.defaults)
            stack.extend((d, lines) for d in n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.Lambda):
            stack.extend((d, lines) for d in n.args.defaults)
            continue
        if isinstance(n, ast.ClassDef):
            continue
        stack.extend((c, lines) for c in ast.iter_child_nodes(n))
    return out


@dataclass
class NameCoverage:
    line: int  # 0-based
    col: int
    name: str
    function: str
    shown: list[str]  # what the hover shows for it ([] when nothing)
    covered: bool
    jax_aval: str = ""


@dataclass
class Coverage:
    names: list[NameCoverage] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.names)

    @property
    def covered(self) -> int:
        return sum(n.covered for n in self.names)

    @property
    def share(self) -> float:
        return self.covered / self.total if self.total else 1.0


def _known(v: object) -> bool:
    inner = v.inner if isinstance(v, RefVal) else v
    if not isinstance(inner, ArrayVal):
        return False
    return inner.dtype is not None and inner.shape is not None and all(d is not None for d in inner.shape)


def _python_number(v: object) -> bool:
    """A Python int/float/bool, its value known (or symbolic): a weakly typed scalar to JAX."""
    return isinstance(v, SymInt) or isinstance(v, Const) and type(v.value) in (int, float, bool)


def hover_coverage(analysis: Analysis, tree: ast.Module,
                   runtime: dict[tuple[int, str], str], ran: set[int] | None = None,
                   params: dict[tuple[int, str], str] | None = None) -> Coverage:
    """Coverage of the ref/array names (per `runtime`, keyed by (function's first line, name))
    inside the kernel bodies of `tree`, by the values `analysis` recorded. With `ran` (1-based
    lines JAX executed), names on lines JAX never ran (a branch the config does not take) are
    left out: nothing says what they would hold. With `params` (what parameters held on entry),
    a parameter counts by what it held on entry, not by what its name held later."""
    lines = analysis.lines
    assert lines is not None
    records = analysis.records
    out = Coverage()
    for fn in kernel_body_functions(tree):
        key_line = first_line(fn)
        fname = getattr(fn, "name", "<lambda>")
        for node, (first, last) in own_names(fn):
            name = node.id if isinstance(node, ast.Name) else node.arg
            source = params if params is not None and isinstance(node, ast.arg) else runtime
            aval = source.get((key_line, name))
            if aval is None:
                continue
            if ran is not None and not isinstance(node, ast.arg) \
                    and not any(ln in ran for ln in range(first, last + 1)):
                continue
            span = lines.span(node)
            rec = records.get(span)
            values = rec.values if rec is not None else []
            shown = sorted({v.describe() for v in values if isinstance(v, (ArrayVal, RefVal))})
            arrays = [v for v in values if not _python_number(v)]
            covered = bool(arrays) and all(_known(v) for v in arrays)
            out.names.append(NameCoverage(span.line, span.col, name, fname, shown, covered, aval))
    return out

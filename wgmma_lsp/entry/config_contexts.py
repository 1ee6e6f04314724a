"""Contexts for library code: the configs a kernel function with no caller in its file is run
with.

A library's kernel entry (tokamax's `gated_linear_unit(x, weights, *, activation, config:
common.Config)`) is called by the library's dispatch layers, never in its own file, so nothing
there gives its `config` a value and every tile size stays unknown. The library itself says
which configs it uses:

- a function of the module whose return annotation is the config class (tokamax's
  `get_heuristics_config(ba) -> common.Config`): the config the op picks when the user gives
  none; its result, from a run with nothing known about its arguments, is one context;
- the config class's defaults (`Config()`, when every field has a default): another.

Each is a context of its own (`entry/context.py`), named by where it comes from and its sizes:
`with tile_m=128, tile_n=64, from gated_linear_unit(config=get_heuristics_config(...)) at line
33`. Only a config the interpreter builds as an instance of that very class counts (a result it
cannot follow is no context): what is not known stays unknown, as in any other context. The
function's other arguments stay unknown (symbolic).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from wgmma_lsp.entry.context import Context, binding_text
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from wgmma_lsp.interpret.interp import Interpreter
    from wgmma_lsp.interpret.values import ClassVal, FuncVal, Value

#: Configs one function is run with at most (providers' first, then the class's defaults); the
#: first always runs, the others within the sweeps' step budget (driver.py).
MAX_CONFIG_CONTEXTS = 16
MAX_LABEL_FIELDS = 5  # config fields a context's label shows


@dataclass(frozen=True)
class ConfigContext:
    """A config a kernel is given, as a context of its own."""
    context: Context
    param: str  # the parameter the config is passed as
    config: Value


def config_contexts(interp: Interpreter, func: FuncVal) -> tuple[list[ConfigContext], int]:
    """The contexts a module-level function taking a config class is run in (empty: none), at
    most MAX_CONFIG_CONTEXTS, and how many distinct configs there were (the rest the budget
    leaves out, said as a WG903 note)."""
    from wgmma_lsp.interpret.values import InstanceVal

    if func.closure is not interp.module_env:
        return [], 0
    params = config_params(interp, func)
    if not params:
        return [], 0
    out: list[ConfigContext] = []
    seen: list[tuple] = []
    for param, cls in params:
        candidates: list[tuple[str, int, Span, Value]] = []
        for provider in _providers(interp, cls, func):
            line = provider.node.lineno - 1
            for result in returned_values(interp, provider):
                candidates.append((f"{func.name}({param}={provider.name}(...))", line,
                                   def_span(interp, provider.node), result))
        if _all_fields_default(cls):
            from wgmma_lsp.interpret.call import Call

            with interp.quiet():
                result = interp.instantiate(cls, Call(interp, None, [], {}, [], {}, func.closure))
            line = func.node.lineno - 1
            candidates.append((f"{func.name}({param}={cls.name}())", line, def_span(interp, func.node),
                               result))
        for origin, line, span, result in candidates:
            if not (isinstance(result, InstanceVal) and result.cls is cls):
                continue
            key = (param, fingerprint(result))
            if key in seen:
                continue
            seen.append(key)
            if len(out) < MAX_CONFIG_CONTEXTS:
                ctx = Context(origin, line, _bindings(result), span=span, open=False)
                out.append(ConfigContext(ctx, param, result))
    return out, len(seen)


def config_params(interp: Interpreter, func: FuncVal) -> list[tuple[str, ClassVal]]:
    """Parameters annotated with one of the user's classes (not an enum or a named tuple)."""
    a = func.node.args
    out = []
    for p in list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs):
        if p.annotation is None or p.arg in ("self", "cls"):
            continue
        cls = class_of(interp, p.annotation, func)
        if cls is not None:
            out.append((p.arg, cls))
    return out


def class_of(interp: Interpreter, annotation: ast.expr, func: FuncVal) -> ClassVal | None:
    from wgmma_lsp.interpret.values import ClassVal

    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        # `Config | None`: the class, when the union holds one class only
        found = [c for c in (class_of(interp, annotation.left, func), class_of(interp, annotation.right, func))
                 if c is not None]
        return found[0] if len(found) == 1 else None
    if not isinstance(annotation, (ast.Name, ast.Attribute)):
        return None
    with interp.quiet():
        v = interp.eval(annotation, func.closure)
    if not isinstance(v, ClassVal) or v.kind not in ("", "pydantic"):
        return None
    return v


def providers(interp: Interpreter) -> list[tuple[FuncVal, ClassVal]]:
    """Module-level functions of the document whose return annotation names one of the user's
    classes, with that class, in source order."""
    out = []
    for f in interp.defined.values():
        if f.closure is not interp.module_env or isinstance(f.node, ast.Lambda) or f.node.returns is None:
            continue
        cls = class_of(interp, f.node.returns, f)
        if cls is not None:
            out.append((f, cls))
    out.sort(key=lambda fc: fc[0].node.lineno)
    return out


def _providers(interp: Interpreter, cls: ClassVal, func: FuncVal) -> list[FuncVal]:
    """The providers of `cls` besides `func` itself."""
    return [f for f, c in providers(interp) if c is cls and f is not func]


def returned_values(interp: Interpreter, provider: FuncVal) -> list[Value]:
    """The configs a provider returns: what each of its `return` statements gave in its run with
    nothing known (a heuristic picking by the arguments, `if m >= 1024: return Config(...)`,
    returns one config per branch, which a join of its results would lose). The provider is
    analysed as every function nothing calls is (here, if that has not happened yet)."""
    if id(provider.node) not in interp.entered:
        with interp.in_context(None):
            interp.generic_call(provider)
    out: list[Value] = []
    todo: list[ast.AST] = list(provider.node.body) if not isinstance(provider.node, ast.Lambda) else []
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            entry = interp._records.get(id(node.value))
            for v in (entry[3] if entry is not None else ()):
                if v not in out:
                    out.append(v)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _all_fields_default(cls: ClassVal) -> bool:
    """Every field has a default, and nothing in the class or its bases may reject them (an
    `__init__`, a `__post_init__`, a validator: tokamax's SM100 attention `Config()` raises in
    `__post_init__` for its own defaults), so `cls()` is a config Python builds."""
    from wgmma_lsp.interpret.values import UNKNOWN

    return bool(cls.fields) and all(d is not UNKNOWN for _, d in cls.fields) and not _may_reject(cls, 0)


def _may_reject(cls: ClassVal, depth: int) -> bool:
    from wgmma_lsp.interpret.values import ClassVal, FuncVal

    if depth > 8:
        return True
    if "__init__" in cls.methods or "__post_init__" in cls.methods:
        return True
    for m in cls.methods.values():
        node = getattr(m, "node", None) if isinstance(m, FuncVal) else None
        if node is not None and any("validator" in ast.unparse(d) for d in getattr(node, "decorator_list", ())):
            return True
    for stmt in cls.node.body:  # a validator the class keeps as something other than a function
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                any("validator" in ast.unparse(d) for d in stmt.decorator_list):
            return True
    return any(_may_reject(b, depth + 1) for b in cls.bases if isinstance(b, ClassVal))


def _bindings(inst: Value) -> tuple[tuple[str, str], ...]:
    out = []
    for name, v in getattr(inst, "attrs", {}).items():
        text = binding_text(v)
        if text is not None and text != "None":
            out.append((name, text))
        if len(out) >= MAX_LABEL_FIELDS:
            break
    return tuple(out)


def fingerprint(inst: Value) -> tuple:
    """What tells two configs apart: each field's spelling (a value with none: itself)."""
    return tuple((k, binding_text(v) or repr(id(v))) for k, v in getattr(inst, "attrs", {}).items())


def def_span(interp: Interpreter, node: ast.AST) -> Span:
    line = getattr(node, "lineno", 1) - 1
    text = interp.lines.lines[line] if 0 <= line < len(interp.lines.lines) else ""
    start = len(text) - len(text.lstrip())
    return Span(line, start, line, len(text.rstrip()))

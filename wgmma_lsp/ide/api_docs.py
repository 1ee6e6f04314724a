"""The documentation of a Pallas API object in the installed JAX's own words: its signature and
the first paragraph of its docstring, read with `ast` from the analysed environment's JAX
(environment.py; never imported), where `interpret/jax_source.py` says the name is defined.

Read once per JAX installation and name, the names asked for together (the APIs the rules name,
ide/api_help.py) from one parse of their defining module: tens of milliseconds on the first
hover, mostly the parse; then the documentation is kept, the parsed module is not. With no JAX in the analysed
environment the parameters come from the facts bundled for the newest supported JAX, without
annotations, defaults or docstring, and say so.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from wgmma_lsp.interpret import jax_source

MAX_SUMMARY = 400  # characters of the first paragraph shown (a hover is read at a glance)


@dataclass(frozen=True)
class ParamDoc:
    name: str
    kind: str  # as interpret/jax_source.Param: "posonly", "pos", "varargs", "kwonly", "varkw"
    text: str  # as written in JAX: `collective_axes: Hashable | tuple[Hashable, ...] = ()`


@dataclass(frozen=True)
class ApiDoc:
    canonical: str  # "plgpu.wgmma"
    name: str  # the defining name: `wgmma`, `WGMMAAccumulatorRef`
    params: tuple[ParamDoc, ...]
    returns: str | None  # the return annotation, as written
    summary: str | None  # the docstring's first paragraph (inspect.cleandoc'ed, lines joined)
    where: str | None  # the defining file, relative to site-packages: `jax/_src/pallas/...py`
    jax_version: str | None
    bundled: bool = False  # no JAX in the analysed environment: the bundled facts' parameters

    def label(self) -> tuple[str, list[tuple[int, int]]]:
        """`wgmma(acc: ..., a, b) -> None`, with each parameter's [start, end) in it."""
        out, offsets = f"{self.name}(", []
        kinds = [p.kind for p in self.params]
        for i, p in enumerate(self.params):
            if i:
                out += ", "
            if p.kind == "kwonly" and "varargs" not in kinds and kinds.index("kwonly") == i:
                out += "*, "
            offsets.append((len(out), len(out) + len(p.text)))
            out += p.text
            if p.kind == "posonly" and (i + 1 == len(kinds) or kinds[i + 1] != "posonly"):
                out += ", /"
        out += ")" + (f" -> {self.returns}" if self.returns else "")
        return out, offsets

    def param_index(self, positional: int, keyword: str | None) -> int | None:
        """The parameter an argument binds to: the `positional`-th positional one, or the one
        named `keyword`; None when none does."""
        if keyword is not None:
            for i, p in enumerate(self.params):
                if p.name == keyword and p.kind in ("pos", "kwonly"):
                    return i
            return next((i for i, p in enumerate(self.params) if p.kind == "varkw"), None)
        positional_params = [i for i, p in enumerate(self.params) if p.kind in ("posonly", "pos")]
        if positional < len(positional_params):
            return positional_params[positional]
        return next((i for i, p in enumerate(self.params) if p.kind == "varargs"), None)


_lock = threading.Lock()
#: (jax folder, version) -> canonical name -> its documentation (None: none found).
_cache: dict[tuple[str | None, str | None], dict[str, ApiDoc | None]] = {}


def api_doc(canonical: str, prefetch: Iterable[str] = ()) -> ApiDoc | None:
    """The documentation of `plgpu.name` / `pl.name` in the analysed environment's JAX; the
    `prefetch` names its defining module also defines are read at the same time."""
    root, version = jax_source._jax_root_and_version()
    key = (str(root) if root is not None else None, version)
    with _lock:
        table = _cache.setdefault(key, {})
        if canonical in table:
            return table[canonical]
    if root is None:
        found = {canonical: _bundled(canonical)}
    else:
        try:  # every public name the same module defines, while it is parsed
            found = {name: _read(name, version) for name in _same_module(canonical, set(prefetch))}
        finally:
            jax_source._parse.cache_clear()  # the parsed modules (tens of MB) are not kept
    with _lock:
        for name, doc in found.items():
            table.setdefault(name, doc)
    return found[canonical]


def _same_module(canonical: str, wanted: set[str]) -> list[str]:
    """`canonical` and the `wanted` names defined in its defining module."""
    from wgmma_lsp.interpret.jax_facts import current

    exp = jax_source.export(canonical)
    out = [canonical]
    if exp is None or exp.module is None:
        return out
    for prefix, module in jax_source.PUBLIC_MODULES.items():
        for name, other in current().exports.get(module, {}).items():
            if other.module == exp.module and f"{prefix}.{name}" in wanted - {canonical}:
                out.append(f"{prefix}.{name}")
    return out


def forget() -> None:
    with _lock:
        _cache.clear()


# -- reading the installed source ------------------------------------------------------------

def _read(canonical: str, version: str | None) -> ApiDoc | None:
    exp = jax_source.export(canonical)
    if exp is None or exp.module is None or exp.name is None:
        return None
    found = _locate(exp.name, exp.module, 0)
    if found is None:
        return None
    node, module, tree = found
    params, returns = _params(node, tree, module)
    if params is None:
        return None
    return ApiDoc(canonical, node.name, params, returns, first_paragraph(ast.get_docstring(node)),
                  module.replace(".", "/") + ".py", version)


def _locate(name: str, module: str, depth: int
            ) -> tuple[ast.FunctionDef | ast.ClassDef, str, ast.Module] | None:
    """The definition of `module.name`, through the imports that re-export it."""
    tree = jax_source._tree(module)
    if tree is None or depth > 6:
        return None
    node = jax_source._find_def(tree, name)
    if node is not None:
        return node, module, tree
    target = jax_source._imports(tree).get(name)
    if target is None:
        return None
    mod, _, attr = target.rpartition(".")
    return _locate(attr, mod, depth + 1) if mod else None


def _params(node: ast.FunctionDef | ast.ClassDef, tree: ast.Module, module: str
            ) -> tuple[tuple[ParamDoc, ...] | None, str | None]:
    if isinstance(node, ast.FunctionDef):
        return _function_params(node.args), _unparse(node.returns)
    init = jax_source._own_init(node)
    if init is not None and init.name == "__init__":
        return _function_params(init.args)[1:], None  # without self
    fields = jax_source._dataclass_params(node, tree, module, 0)
    if fields is None:
        return None, None
    written = _field_texts(node, tree, module)
    out = [ParamDoc(n, "kwonly" if kw else "pos", written.get(n, n)) for n, _, kw in fields if not kw]
    out += [ParamDoc(n, "kwonly", written.get(n, n)) for n, _, kw in fields if kw]
    return tuple(out), None


def _field_texts(cls: ast.ClassDef, tree: ast.Module, module: str) -> dict[str, str]:
    """`name: annotation = default` of each annotated field, bases first (overridden after)."""
    out: dict[str, str] = {}
    for base in cls.bases:
        resolved = jax_source._resolve_class(ast.unparse(base), tree, module, 1)
        if resolved is not None:
            out.update(_field_texts(*resolved))
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            default = _field_default(stmt.value)
            out[stmt.target.id] = f"{stmt.target.id}: {ast.unparse(stmt.annotation)}" + (
                f" = {default}" if default is not None else "")
    return out


def _field_default(value: ast.expr | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, ast.Call) and jax_source._decorator_name(value) == "field":
        for k in value.keywords:
            if k.arg == "default":
                return ast.unparse(k.value)
            if k.arg == "default_factory":
                return f"{ast.unparse(k.value)}()"
        return None
    return ast.unparse(value)


def _function_params(args: ast.arguments) -> tuple[ParamDoc, ...]:
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = [ParamDoc(a.arg, "posonly" if i < len(args.posonlyargs) else "pos", _arg(a, d))
           for i, (a, d) in enumerate(zip(positional, defaults))]
    if args.vararg is not None:
        out.append(ParamDoc(args.vararg.arg, "varargs", "*" + _arg(args.vararg, None)))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(ParamDoc(a.arg, "kwonly", _arg(a, d)))
    if args.kwarg is not None:
        out.append(ParamDoc(args.kwarg.arg, "varkw", "**" + _arg(args.kwarg, None)))
    return tuple(out)


def _arg(a: ast.arg, default: ast.expr | None) -> str:
    text = a.arg + (f": {ast.unparse(a.annotation)}" if a.annotation is not None else "")
    if default is not None:
        text += (" = " if a.annotation is not None else "=") + ast.unparse(default)
    return text


def _unparse(node: ast.expr | None) -> str | None:
    return ast.unparse(node) if node is not None else None


def first_paragraph(doc: str | None) -> str | None:
    """The first paragraph of a cleaned docstring, its lines joined by single spaces."""
    if not doc:
        return None
    lines: list[str] = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines) or None


# -- with no JAX: the bundled facts ------------------------------------------------------------

def _bundled(canonical: str) -> ApiDoc | None:
    from wgmma_lsp.interpret.jax_facts import current

    facts = current()
    sig = facts.signatures.get(canonical)
    if sig is None:
        return None
    params = [p for p in sig.params if not (sig.binds_self and p.name == "self")]
    texts = {"varargs": "*{}", "varkw": "**{}"}
    return ApiDoc(canonical, sig.qualname.split(".")[0],
                  tuple(ParamDoc(p.name, p.kind, texts.get(p.kind, "{}").format(p.name)) for p in params),
                  None, None, None, facts.jax_version, bundled=True)


# -- Markdown -----------------------------------------------------------------------------------

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|obj|data|exc|ref):`~?([^`]+)`")
_DOUBLE = re.compile(r"``([^`]+)``")


def summary_markdown(summary: str) -> str:
    """The first paragraph as Markdown: reST roles and ``literals`` as code spans, the rest
    escaped (ide/hover.py's `escape_prose`), cut at MAX_SUMMARY characters."""
    from wgmma_lsp.ide.hover_text import escape_prose

    text = _DOUBLE.sub(r"`\1`", _ROLE.sub(r"`\1`", summary))
    if len(text) > MAX_SUMMARY:
        cut = text[:MAX_SUMMARY]
        if cut.count("`") % 2:  # never cut inside a code span
            cut = cut[:cut.rfind("`")]
        text = cut.rstrip() + " …"
    return escape_prose(text)

"""Reading the installed JAX's source (never imported): its files, exports, signatures and the
single facts the analysis needs, each by a `_read_*` function. `interpret/jax_facts.py` runs these
readers once per JAX and keeps what they return; the questions the analysis asks are answered from
those facts by `interpret/jax_source.py` (and `jax_version.py`), which import this module, never
the other way round."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from wgmma_lsp import environment, observed
from wgmma_lsp.interpret.jax_api_types import Export, Param, Signature
from wgmma_lsp.interpret.version_text import LANE, WARPGROUP, parse
from wgmma_lsp.lazy_re import LazyPattern

#: Canonical prefixes (interpret/resolve.py) of the public modules whose exports are read.
PUBLIC_MODULES = {"plgpu": "jax.experimental.pallas.mosaic_gpu", "pl": "jax.experimental.pallas"}
#: The same APIs under JAX 0.12.1's preferred paths (`jax.experimental.pallas[.mosaic_gpu]` became
#: their star-importing aliases): their exports are read too, where they exist, since their
#: `AttributeError`s name them and their `_deprecations` differ.
ALIAS_MODULES = {"jax.pallas.mosaic_gpu": "plgpu", "jax.pallas": "pl"}



def jax_root() -> Path | None:
    """The analysed environment's `jax` package directory (None: no JAX there)."""
    return _jax_root_and_version()[0]


def _jax_root_and_version() -> tuple[Path | None, str | None]:
    env = environment.active()
    return env.jax_root, env.jax_version


#: The files read since `start_reading` (jax_facts_cache.py keys its entries on their stamps).
_files_read: set[Path] = set()


def start_reading() -> None:
    _files_read.clear()
    _parse.cache_clear()


def stop_reading() -> None:
    _parse.cache_clear()


def files_read() -> set[Path]:
    return set(_files_read)


def read_source(dotted_or_relpath: str) -> str | None:
    """The text of one file of the analysed JAX (`jax._src.core` or `_src/core.py` relative to
    the package), recorded as read; None when it cannot be read."""
    root = _jax_root_and_version()[0]
    if root is None:
        return None
    path = (_module_file(root, dotted_or_relpath) if not dotted_or_relpath.endswith(".py")
            else root / dotted_or_relpath)
    if path is None:
        return None
    _files_read.add(path)
    try:
        return observed.read_text(path)
    except OSError:
        return None


def module_file(dotted: str) -> Path | None:
    """The file of module `dotted` of the analysed JAX (`…/jax/pallas/__init__.py`), as its
    `__file__` names it; None when there is no JAX or no such file."""
    root = _jax_root_and_version()[0]
    return _module_file(root, dotted) if root is not None else None


def _module_file(root: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")
    if parts[0] != "jax":
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if observed.exists(candidate):
            return candidate
    return None


@functools.lru_cache(maxsize=64)
def _parse(path: Path) -> ast.Module | None:
    _files_read.add(path)
    try:
        return ast.parse(observed.read_text(path), str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def _tree(dotted: str) -> ast.Module | None:
    root = _jax_root_and_version()[0]
    if root is None:
        return None
    path = _module_file(root, dotted)
    return _parse(path) if path is not None else None


# -- exports ---------------------------------------------------------------------------------

def _exports(dotted: str) -> dict[str, Export] | None:
    """The public names of module `dotted` (what `module.name` finds), with the names its
    `_deprecations` serve through `__getattr__` (deprecated, or removed with their message)."""
    table = _module_table(dotted, 0)
    if table is None:
        return None
    public, deprecations = table
    return {**public, **deprecations}


#: How deep `from m import *` and `**m._deprecations` are followed (JAX 0.12.1: two levels,
#: `jax.experimental.pallas.mosaic_gpu` -> `jax.pallas.mosaic_gpu`).
_MAX_STAR_DEPTH = 4


def _module_table(dotted: str, depth: int) -> tuple[dict[str, Export], dict[str, Export]] | None:
    """(the names bound in module `dotted`'s namespace that do not start with `_`, the names its
    `_deprecations` dict serves). Follows `from m import *` (m's `__all__`, else its public
    names; never its deprecations, which m's own `__getattr__` serves) and `**m._deprecations`
    within the dict, as JAX 0.12.1's `jax.experimental.pallas` aliases of `jax.pallas` do."""
    tree = _tree(dotted)
    if tree is None or depth > _MAX_STAR_DEPTH:
        return None
    out: dict[str, Export] = {}
    private: dict[str, Export] = {}
    deprecations: dict[str, Export] = {}
    modules = _imports(tree)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    out.update(_star(node.module, depth))
                    continue
                public = alias.asname or alias.name
                target = private if public.startswith("_") else out
                target[public] = Export(node.module, alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            out[node.name] = Export(dotted, node.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "_deprecations" and isinstance(node.value, ast.Dict):
                for k, v in zip(node.value.keys, node.value.values):
                    if k is None:  # `**other._deprecations`: that module's, served by this one too
                        deprecations.update(_merged_deprecations(v, modules, depth))
                    elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                        exp = _deprecation(v, private)
                        if exp is not None:
                            deprecations[k.value] = exp
            elif not name.startswith("_"):
                # `ACC = WGMMAAccumulatorRef` (0.12.1): the same object as the name it copies
                value = node.value
                known = (out.get(value.id) or private.get(value.id)) if isinstance(value, ast.Name) else None
                out[name] = known if known is not None else Export(dotted, name)
    all_names = _dunder_all(tree)
    if all_names is not None:
        out = {k: v for k, v in out.items() if k in all_names}
    return out, deprecations


def _star(module: str, depth: int) -> dict[str, Export]:
    table = _module_table(module, depth + 1)
    return dict(table[0]) if table is not None else {}


def _merged_deprecations(v: ast.expr, modules: dict[str, str], depth: int) -> dict[str, Export]:
    if isinstance(v, ast.Attribute) and v.attr == "_deprecations" and isinstance(v.value, ast.Name) \
            and v.value.id in modules:
        table = _module_table(modules[v.value.id], depth + 1)
        if table is not None:
            return dict(table[1])
    return {}


def _dunder_all(tree: ast.Module) -> set[str] | None:
    """A literal module-level `__all__` (what `from m import *` takes), else None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return {str(x) for x in value} if isinstance(value, (list, tuple)) else None
    return None


def _deprecation(v: ast.expr, private: dict[str, Export]) -> Export | None:
    """A `_deprecations` entry: `(message, fn)`; `fn` None means removed (AttributeError)."""
    if not (isinstance(v, ast.Tuple) and len(v.elts) == 2):
        return None
    msg_node, fn = v.elts
    try:
        message = ast.literal_eval(msg_node)
    except ValueError:
        return None
    if isinstance(fn, ast.Constant) and fn.value is None:
        return Export(None, None, removed_message=str(message))
    if isinstance(fn, ast.Name) and fn.id in private:
        src = private[fn.id]
        return Export(src.module, src.name, deprecated=True)
    return Export(None, None, deprecated=True)


# -- signatures ------------------------------------------------------------------------------

#: Decorators that keep the signature (`functools.wraps` wrappers that call through).
_SIGNATURE_KEEPING = {"api_boundary"}


def _decorator_name(d: ast.expr) -> str:
    if isinstance(d, ast.Call):
        if _decorator_name(d.func) == "partial" and d.args:  # `@partial(api_boundary, ...)`
            return _decorator_name(d.args[0])
        d = d.func
    if isinstance(d, ast.Attribute):
        return d.attr
    if isinstance(d, ast.Name):
        return d.id
    return "?"


def _function_params(args: ast.arguments) -> tuple[Param, ...]:
    positional = list(args.posonlyargs) + list(args.args)
    n_defaults = len(args.defaults)
    first_default = len(positional) - n_defaults
    out: list[Param] = []
    for i, a in enumerate(positional):
        kind = "posonly" if i < len(args.posonlyargs) else "pos"
        out.append(Param(a.arg, kind, i < first_default))
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, "varargs", False))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, "kwonly", d is None))
    if args.kwarg is not None:
        out.append(Param(args.kwarg.arg, "varkw", False))
    return tuple(out)


def _find_def(tree: ast.Module, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            if isinstance(node, ast.FunctionDef) and any(
                    _decorator_name(d) == "overload" for d in node.decorator_list):
                continue
            found = node
    return found


def _imports(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound by imports: `pallas_core` -> `jax._src.pallas.core`, and
    `Foo` -> `jax._src.x.Foo` for `from jax._src.x import Foo`."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
    return out


def _is_dataclass(cls: ast.ClassDef) -> tuple[bool, bool]:
    """(is a dataclass, kw_only=True)."""
    for d in cls.decorator_list:
        if _decorator_name(d) == "dataclass":
            kw_only = isinstance(d, ast.Call) and any(
                k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in d.keywords)
            init_off = isinstance(d, ast.Call) and any(
                k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in d.keywords)
            return (not init_off), kw_only
    return False, False


def _is_classvar(annotation: ast.expr) -> bool:
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return ast.unparse(node).endswith("ClassVar")


def _field_info(value: ast.expr | None) -> tuple[bool, bool, bool | None]:
    """(has a default, takes part in __init__, kw_only override) of a dataclass field."""
    if value is None:
        return False, True, None
    if isinstance(value, ast.Call) and _decorator_name(value) == "field":
        kws = {k.arg: k.value for k in value.keywords}
        init = not (isinstance(kws.get("init"), ast.Constant) and kws["init"].value is False)  # type: ignore[union-attr]
        kw = kws.get("kw_only")
        kw_only = kw.value if isinstance(kw, ast.Constant) and isinstance(kw.value, bool) else None
        return ("default" in kws or "default_factory" in kws), init, kw_only
    return True, True, None


_PLAIN_BASES = {"object", "Protocol", "Generic", "ABC"}


def _dataclass_params(cls: ast.ClassDef, tree: ast.Module, module: str, depth: int
                      ) -> list[tuple[str, bool, bool]] | None:
    """The `__init__` fields of a dataclass, bases first: (name, has default, kw_only)."""
    is_dc, kw_only = _is_dataclass(cls)
    if not is_dc:
        return None
    fields: list[tuple[str, bool, bool]] = []
    for base in cls.bases:
        base_name = ast.unparse(base)
        if base_name.split("[")[0].split(".")[-1] in _PLAIN_BASES:
            continue
        resolved = _resolve_class(base_name, tree, module, depth + 1)
        if resolved is None:
            return None
        base_cls, base_tree, base_module = resolved
        if _is_dataclass(base_cls)[0]:
            sub = _dataclass_params(base_cls, base_tree, base_module, depth + 1)
            if sub is None:
                return None
            fields.extend(sub)
        elif _own_init(base_cls) is not None or _annotated_fields(base_cls):
            return None  # a plain base with state of its own: not modelled
    kw_only_marker = False
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if ast.unparse(stmt.annotation).endswith("KW_ONLY"):
                kw_only_marker = True
                continue
            if _is_classvar(stmt.annotation):
                continue
            has_default, init, kw = _field_info(stmt.value)
            if not init:
                continue
            name = stmt.target.id
            entry = (name, has_default, kw if kw is not None else (kw_only or kw_only_marker))
            at = next((i for i, f in enumerate(fields) if f[0] == name), None)
            if at is None:
                fields.append(entry)
            else:  # a redefined field keeps its place (dataclasses' field order)
                fields[at] = entry
    return fields


def _annotated_fields(cls: ast.ClassDef) -> bool:
    return any(isinstance(s, ast.AnnAssign) and not _is_classvar(s.annotation) for s in cls.body)


def _own_init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    for s in cls.body:
        if isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__new__"):
            return s
    return None


def _resolve_class(expr: str, tree: ast.Module, module: str, depth: int
                   ) -> tuple[ast.ClassDef, ast.Module, str] | None:
    if depth > 6:
        return None
    imports = _imports(tree)
    head, _, rest = expr.partition(".")
    if not rest:
        node = _find_def(tree, head)
        if isinstance(node, ast.ClassDef):
            return node, tree, module
        target = imports.get(head)
        if target is None:
            return None
        mod, _, name = target.rpartition(".")
    else:
        mod = imports.get(head)
        name = rest
        if mod is None or "." in name:
            return None
    other = _tree(mod)
    if other is None:
        return None
    node = _find_def(other, name)
    return (node, other, mod) if isinstance(node, ast.ClassDef) else None


def _class_signature(cls: ast.ClassDef, tree: ast.Module, module: str) -> Signature | None:
    if any(k.arg == "metaclass" for k in cls.keywords):
        return None
    for base in cls.bases:
        if ast.unparse(base).split(".")[-1] in ("Enum", "IntEnum", "NamedTuple", "TypedDict"):
            return None
    own = _own_init(cls)
    if own is not None:
        if own.name == "__new__" or own.decorator_list:
            return None
        return Signature(f"{cls.name}.__init__", _function_params(own.args), binds_self=True)
    fields = _dataclass_params(cls, tree, module, 0)
    if fields is None:
        return None
    params: list[Param] = [Param("self", "pos", True)]
    params += [Param(n, "pos", not d) for n, d, kw in fields if not kw]
    params += [Param(n, "kwonly", not d) for n, d, kw in fields if kw]
    return Signature(f"{cls.name}.__init__", tuple(params), binds_self=True)


def _forwarding(fn: ast.FunctionDef, tree: ast.Module, module: str, depth: int
                ) -> tuple[Signature | None, tuple[str, ...]]:
    """Where a function passes its `**kwargs` on, if it does so at its top level (not in a
    branch or a nested function) — e.g. `mesh = Mesh(..., **mesh_kwargs)`."""
    if fn.args.kwarg is None or depth > 3:
        return None, ()
    varkw = fn.args.kwarg.arg
    for stmt in fn.body:
        if not isinstance(stmt, (ast.Assign, ast.Expr, ast.AnnAssign)):
            continue
        value = stmt.value
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            continue
        if not any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == varkw
                   for k in value.keywords):
            continue
        if value.args and any(isinstance(a, ast.Starred) for a in value.args):
            return None, ()
        target = _signature_in(value.func.id, tree, module, depth + 1)
        own = tuple(k.arg for k in value.keywords if k.arg is not None)
        if target is not None and not value.args:
            return target, own
        return None, ()
    return None, ()


def _signature_in(name: str, tree: ast.Module, module: str, depth: int) -> Signature | None:
    node = _find_def(tree, name)
    if node is None:
        target = _imports(tree).get(name)
        if target is None or depth > 6:
            return None
        mod, _, attr = target.rpartition(".")
        other = _tree(mod)
        return _signature_in(attr, other, mod, depth + 1) if other is not None else None
    if isinstance(node, ast.ClassDef):
        return _class_signature(node, tree, module)
    if any(_decorator_name(d) not in _SIGNATURE_KEEPING for d in node.decorator_list):
        return None
    forwards, own = _forwarding(node, tree, module, depth)
    return Signature(node.name, _function_params(node.args), forwards, own)


def _read_signature(exp: Export) -> Signature | None:
    """The parameters of an exported name, read from its defining module."""
    if exp.module is None or exp.name is None:
        return None
    tree = _tree(exp.module)
    if tree is None:
        return None
    return _signature_in(exp.name, tree, exp.module, 0)


# -- other facts -----------------------------------------------------------------------------

def _source_contains(dotted: str, needle: str) -> bool | None:
    text = read_source(dotted)
    return needle in text if text is not None else None


def _read_tracer_memory_space_raises() -> bool | None:
    return _source_contains("jax._src.core", "The 'memory_space' attribute is not available on")


def _read_pallas_call_lowers_mosaic_gpu() -> bool | None:
    return _source_contains("jax._src.pallas.mosaic_gpu.pallas_call_registration",
                            "register_lowering_rule(")


def _read_barrier_default_num_barriers() -> list[int] | None:
    """The shape of the barrier array `plgpu.Barrier()` makes by default (its `num_barriers`
    field's default, normalised as its `__post_init__` does: an int n is `(n,)`): [1] in JAX
    0.10, [] (a single barrier, a ref of empty shape) in 0.12."""
    tree = _tree("jax._src.pallas.mosaic_gpu.core")
    cls = _find_def(tree, "Barrier") if tree is not None else None
    if not isinstance(cls, ast.ClassDef):
        return None
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id == "num_barriers" and stmt.value is not None:
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                return None
            if isinstance(value, int) and not isinstance(value, bool):
                return [value]
            if isinstance(value, tuple) and all(type(d) is int for d in value):
                return list(value)
    return None


# -- Mosaic GPU layout inference (Warpgroup lowering) ------------------------------------------

_LAYOUT_INFERENCE = "jax.experimental.mosaic.gpu.layout_inference"
_LAYOUT_FAILURE_PREFIX = "Failed to infer a possible set of layouts. This should only happen if"


def _read_layout_failure() -> str | None:
    tree = _tree(_LAYOUT_INFERENCE)
    if tree is None:
        return None
    texts = {n.exc.args[0].value for n in ast.walk(tree)
             if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and n.exc.args
             and isinstance(n.exc.args[0], ast.Constant) and isinstance(n.exc.args[0].value, str)
             and n.exc.args[0].value.startswith(_LAYOUT_FAILURE_PREFIX)}
    return texts.pop() if len(texts) == 1 else None


def _is_swizzle_only_case(case: ast.match_case) -> bool:
    p = case.pattern
    if not (isinstance(p, ast.MatchSequence) and len(p.patterns) == 1):
        return False
    only = p.patterns[0]
    if isinstance(only, ast.MatchAs) and only.pattern is not None:
        only = only.pattern
    if not isinstance(only, ast.MatchClass):
        return False
    cls = only.cls
    name = cls.attr if isinstance(cls, ast.Attribute) else cls.id if isinstance(cls, ast.Name) else ""
    return name == "SwizzlingMode"


def _read_swizzle_only() -> bool | None:
    tree = _tree(_LAYOUT_INFERENCE)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "_extract_smem_transforms_from_custom_transform_attrs":
            return any(_is_swizzle_only_case(c) for m in ast.walk(node) if isinstance(m, ast.Match)
                       for c in m.cases)
    return None


# -- plgpu.wgmma's dtype check ----------------------------------------------------------------

_MIXED_DTYPES = "Mixed input dtypes for matrix multiplication unsupported"


def _read_wgmma_mixable_dtypes() -> list[str] | None:
    """The operand dtypes `plgpu.wgmma` lets differ, read from its check in the installed source:
    `if a.dtype != b.dtype: raise ValueError("Mixed input dtypes …")` (0.10: none) or
    `if a.dtype != b.dtype and not both_fp8:` with `fp8_dtypes = (jnp.float8_e4m3fn,
    jnp.float8_e5m2)` (0.12: the FP8 pair). None when the check is not found or not one of those."""
    tree = _tree("jax._src.pallas.mosaic_gpu.primitives")
    fn = _find_def(tree, "wgmma") if tree is not None else None
    if not isinstance(fn, ast.FunctionDef):
        return None
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and any(
                isinstance(r, ast.Raise) and _MIXED_DTYPES in ast.unparse(r) for r in node.body)):
            continue
        test = node.test
        if isinstance(test, ast.Compare) and ast.unparse(test) == "a.dtype != b.dtype":
            return []
        if (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2
                and ast.unparse(test.values[0]) == "a.dtype != b.dtype"
                and isinstance(test.values[1], ast.UnaryOp) and isinstance(test.values[1].op, ast.Not)):
            names = sorted(set(re.findall(r"\bfloat8_\w+", ast.unparse(fn))))
            return names or None
        return None
    return None


# -- the default lowering semantics ----------------------------------------------------------

# `lowering_semantics: mgpu.core.LoweringSemantics = mgpu.core.LoweringSemantics.Lane` in the
# `CompilerParams` dataclass of jax/_src/pallas/mosaic_gpu/core.py.
_DEFAULT_FIELD = LazyPattern(
    r"^\s*lowering_semantics\s*:\s*[\w.]*LoweringSemantics\s*=\s*[\w.]*LoweringSemantics\.(\w+)",
    re.MULTILINE)

def read_default_lowering(version_text: str | None) -> str | None:
    """The default lowering semantics read from the analysed JAX's source (the dataclass
    field's default), else known from its version."""
    text = read_source("_src/pallas/mosaic_gpu/core.py")
    if text is not None:
        m = _DEFAULT_FIELD.search(text)
        if m and m.group(1).lower() in (LANE, WARPGROUP):
            return m.group(1).lower()
    v = parse(version_text) if version_text is not None else None
    if v is not None and (0, 10) <= v[:2] < (0, 11):
        return LANE
    if v is not None and v[:2] >= (0, 12):
        return WARPGROUP
    return None

"""A parameter's jaxtyping annotation as the array it declares: `q: Float[Array, "T H D"]`.

jaxtyping's annotations state an array parameter's rank, its sizes by name and its dtype kind;
under `@jaxtyping.jaxtyped(typechecker=...)` they are checked when the function is called (a
call whose arguments do not match raises), and names shared between parameters are one size
(`q: Float[Array, "T H D"]`, `k: Float[Array, "t h D"]`: the same `D`). tokamax annotates every
kernel function this way.

A parameter the analysis knows nothing about (no caller gives it, or the caller's value is
unknown) takes the annotation's array: its shape with the annotation's names as symbolic sizes
(`float32[T, H, D]` in a hover), its dtype the annotation's when it names one (`BFloat16`,
`Float32`, `Bool`), else known by the parameter's name (`q.dtype`). A symbolic size or dtype
never proves an error (dims.py, dtypes.py); what the annotation gives is the rank and which
sizes are equal. A dimension jaxtyping does not pin to one size — `#H` (broadcastable), `*B`
or `...` (any number of axes), `_` (unchecked), an expression — is unknown (`*B`/`...` make
the rank unknown: no shape).

Only a plain `Kind[Array, "dims"]` (or `jax.Array`) counts: `Float[Array, ...] | None`, a
numpy array, a string annotation, an unknown `Kind` are not read (the parameter stays unknown).
The head is resolved through the function's module: it is jaxtyping's only when the name was
imported from `jaxtyping`.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.dtypes import DType, SymDType
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.values import ApiVal, ArrayVal, ModuleVal, UserModuleVal, Value
from wgmma_lsp.lazy_re import LazyPattern

# jaxtyping's dtype classes that name exactly one dtype; the others (Float, Int, Shaped,
# Inexact, Num, ...) name a kind, read as the parameter's own dtype.
_EXACT = {
    "BFloat16": "bfloat16", "Float16": "float16", "Float32": "float32", "Float64": "float64",
    "Int4": "int4", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
    "UInt4": "uint4", "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64",
    "Bool": "bool", "Complex64": "complex64", "Complex128": "complex128",
}
_KINDS = {"Float", "Int", "UInt", "Integer", "Inexact", "Num", "Real", "Shaped", "Complex",
          "Float8e4m3fn", "Float8e5m2"} | set(_EXACT)
_NAME = LazyPattern(r"[A-Za-z][A-Za-z0-9_]*\Z")


def declared_array(annotation: ast.expr | None, param: str, env: Env) -> ArrayVal | None:
    """The array `annotation` declares for parameter `param`, or None when it is not a
    jaxtyping array annotation this module reads."""
    if not isinstance(annotation, ast.Subscript):
        return None
    kind = _jaxtyping_name(annotation.value, env)
    if kind is None or kind not in _KINDS:
        return None
    parts = annotation.slice
    if not (isinstance(parts, ast.Tuple) and len(parts.elts) == 2):
        return None
    array, spec = parts.elts
    if not _is_jax_array(array, env):
        return None
    if not (isinstance(spec, ast.Constant) and isinstance(spec.value, str)):
        return None
    dtype: DType = DType(_EXACT[kind]) if kind in _EXACT else SymDType(f"{param}.dtype")
    return ArrayVal(_shape(spec.value), dtype)


def _shape(spec: str) -> tuple[D.Dim, ...] | None:
    dims: list[D.Dim] = []
    for token in spec.split():
        if token.startswith("*") or token == "...":
            return None  # any number of axes
        if token.isdigit():
            dims.append(int(token))
        elif _NAME.match(token) and not token.startswith("_"):
            dims.append(D.Sym.var(token))
        else:
            dims.append(None)  # `#H`, `_`, `?H`, `H=...`, an expression: not one known size
    return tuple(dims)


def _jaxtyping_name(node: ast.expr, env: Env) -> str | None:
    """`Float` / `jaxtyping.Float` when it names jaxtyping's `Float`."""
    if isinstance(node, ast.Name):
        v = env.lookup(node.id)
        return _api_attr(v, "jaxtyping")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        mod = env.lookup(node.value.id)
        if isinstance(mod, ModuleVal) and mod.name == "jaxtyping":
            return node.attr
    return None


def _api_attr(v: Value | None, module: str) -> str | None:
    if isinstance(v, ApiVal) and v.name.startswith(module + "."):
        return v.name[len(module) + 1:]
    return None


def _is_jax_array(node: ast.expr, env: Env) -> bool:
    """`Array` (jaxtyping's, which is `jax.Array`) or `jax.Array`."""
    if isinstance(node, ast.Name):
        v = env.lookup(node.id)
        return isinstance(v, ApiVal) and v.name in ("jaxtyping.Array", "jax.Array")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr == "Array":
        mod = env.lookup(node.value.id)
        return isinstance(mod, ModuleVal) and mod.name in ("jax", "jaxtyping") \
            and not isinstance(mod, UserModuleVal)
    return False

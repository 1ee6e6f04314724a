"""The primitives jnp/lax operations bind inside a Mosaic GPU kernel, checked against the
lowering rules the installed JAX registers (interpret/jax_lowering_rules.py): WG084.

Mirrors jax/_src/pallas/mosaic_gpu/lowering.py `lower_jaxpr_to_mosaic_gpu` (0.10.2, 0.12.0.1):
every equation of the kernel's jaxpr is looked up in `mosaic_lowering_rules[(lowering
semantics, primitive semantics)]`, and one with no rule raises `NotImplementedError
("Unimplemented primitive in Pallas Mosaic GPU lowering: …")` on the line that bound it.

Which primitive each operation binds is what JAX 0.10.2 and 0.12.0.1 bind (checked against
their jaxprs by tests/test_lowering_primitives.py), claimed only on those versions and only for
arrays of known rank (refs and Python values are converted first and not claimed):

- `jnp.dot`, `jnp.matmul`, `lax.dot`, `a @ b` (both at least 1-D) -> `dot_general`;
- `x.T` (2 or more dimensions), `jnp.transpose`, `lax.transpose`, `x.transpose(...)`, `jnp.swapaxes` with a permutation that
  is not the identity (an identity permutation binds nothing) -> `transpose`;
- `jnp.concatenate` / `lax.concatenate` of two or more arrays (one binds nothing) -> `concatenate`;
- `jnp.stack` of arrays -> `stack`;
- `jnp.argmax` / `jnp.argmin` / `x.argmax(axis=…)` with an axis -> `argmax` / `argmin`.

Only at warpgroup level (PrimitiveSemantics.Warpgroup): inside `plgpu.warp_map` / `pl.core_map`
bodies the primitive semantics is the warp's, and nothing is claimed.
"""

from __future__ import annotations

import ast
import weakref

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_source import lowering_rule_registered as registered
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import ArrayVal, Const, TupleVal, Value
from wgmma_lsp.models import array_elementwise, array_reductions, array_reshapes, pipelines  # noqa: F401 - their models are wrapped below
from wgmma_lsp.models.registry import ATTRIBUTE_SITES, METHODS, MODELS, OPERATOR_SITES
from wgmma_lsp.rules import lowering_unimplemented_primitive as wg084

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable

#: The JAX versions whose jnp/lax -> primitive mapping the tests verified.
_VERIFIED = ((0, 10), (0, 12))

#: Interpreters inside a warp-level body (warp_map, core_map): depth of nesting.
_WARP_LEVEL: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()


def bound(interp: Any, primitive: str, span: Any, line: int) -> None:
    """`primitive` (its name: "dot_general") is bound at `span`: WG084 when the kernel's
    lowering semantics has no rule for it in the installed JAX."""
    sem = interp.kernel.lowering
    if sem not in ("lane", "warpgroup") or _WARP_LEVEL.get(interp, 0) or span is None:
        return
    version = installed()
    if version is None or version[:2] not in _VERIFIED:
        return
    if registered(f"{primitive}_p", sem) is not False:
        return
    interp.report(wg084.RULE, wg084.message(primitive, sem), span, line)


def _ndim(v: Value) -> int | None:
    return len(v.shape) if isinstance(v, ArrayVal) and v.shape is not None else None


def _is_permutation_change(ndim: int, perm: Value) -> bool:
    """Whether `perm` (None: reversed axes) is a known permutation of `ndim` axes other than
    the identity."""
    if isinstance(perm, Const) and perm.value is None:
        return ndim >= 2
    items = perm.items if isinstance(perm, TupleVal) else None
    if items is None or len(items) != ndim:
        return False
    axes = [a.value if isinstance(a, Const) and isinstance(a.value, int)
            and not isinstance(a.value, bool) else None for a in items]
    if any(a is None or not -ndim <= a < ndim for a in axes):
        return False
    norm = [a % ndim for a in axes]  # type: ignore[operator]
    return sorted(norm) == list(range(ndim)) and norm != list(range(ndim))


def wrap_model(names: tuple[str, ...], check: Callable[[Call, str], str | None],
               blame: Callable[[Call], int | None] | None = None) -> None:
    """Extend the models `names` with the check of the primitive `check(call, name)` says each
    call binds (None: none known); the finding is blamed on the call's line, or on
    `blame(call)` (None: not reported)."""
    for name in names:
        original = MODELS[name]

        def wrapped(call: Call, original=original, name=name) -> Value:
            out = original(call)
            if isinstance(out, ArrayVal):  # JAX's own checks passed: the primitive is bound
                primitive = check(call, name)
                if primitive is not None:
                    line = call.line if blame is None else blame(call)
                    if line is not None:
                        bound(call.interp, primitive, call.span, line)
            return out

        MODELS[name] = wrapped


def _dot(call: Call, name: str) -> str | None:
    a, b = call.get(0), call.get(1)
    na, nb = _ndim(a), _ndim(b)
    return "dot_general" if na is not None and nb is not None and na >= 1 and nb >= 1 else None


def _transpose(call: Call, name: str) -> str | None:
    x = call.get(0)
    n = _ndim(x)
    key = "axes" if "axes" in call.kwargs else "permutation"
    perm = call.get(1, key, Const(None))
    if name == "lax.transpose" and isinstance(perm, Const) and perm.value is None:
        return None  # lax.transpose needs its permutation
    return "transpose" if n is not None and _is_permutation_change(n, perm) else None


def _swapaxes(call: Call, name: str) -> str | None:
    n = _ndim(call.get(0))
    a, b = call.get(1), call.get(2)
    if n is None or not (isinstance(a, Const) and isinstance(b, Const)):
        return None
    if not all(isinstance(v, int) and -n <= v < n for v in (a.value, b.value)):
        return None
    return "transpose" if a.value % n != b.value % n else None


def _sequence(call: Call, minimum: int) -> bool:
    key = "arrays" if "arrays" in call.kwargs else "operands"
    seq = call.get(0, key)
    return isinstance(seq, TupleVal) and len(seq.items) >= minimum and all(
        _ndim(a) is not None for a in seq.items)


def _axis(v: Value, ndim: int | None) -> bool:
    return ndim is not None and ndim >= 1 and isinstance(v, Const) and isinstance(v.value, int) \
        and not isinstance(v.value, bool) and -ndim <= v.value < ndim


def _wrap_arg_methods() -> None:
    for name in ("argmax", "argmin"):
        original = METHODS[f"array.{name}"]

        def wrapped(obj: Value, call: Call, original=original, name=name) -> Value:
            out = original(obj, call)
            if isinstance(out, ArrayVal) and _axis(call.get(0, "axis", Const(None)), _ndim(obj)):
                bound(call.interp, name, call.span, call.line)
            return out

        METHODS[f"array.{name}"] = wrapped


def _wrap_transpose_method() -> None:
    original = METHODS["array.transpose"]

    def wrapped(obj: Value, call: Call) -> Value:
        out = original(obj, call)
        n = _ndim(obj)
        if isinstance(out, ArrayVal) and n is not None:
            args = call.args
            perm: Value = (Const(None) if not args else args[0] if len(args) == 1 and isinstance(args[0], TupleVal)
                           else TupleVal(tuple(args)))
            if not call.kwargs and _is_permutation_change(n, perm):
                bound(call.interp, "transpose", call.span, call.line)
        return out

    METHODS["array.transpose"] = wrapped


def matmul_operator(interp: Any, left: Value, right: Value, node: ast.AST, result: Value) -> Value:
    """`left @ right` on arrays (models/arrays.py `array_binop`): `jnp.matmul`."""
    nl, nr = _ndim(left), _ndim(right)
    if isinstance(result, ArrayVal) and nl is not None and nr is not None and nl >= 1 and nr >= 1:
        span = interp.span(node)
        bound(interp, "dot_general", span, span.line)
    return result


def _array_T(interp: Any, obj: Value, node: ast.AST) -> None:
    """`x.T`: `jnp.transpose(x)`, a transpose for 2 or more dimensions."""
    n = _ndim(obj)
    if n is not None and n >= 2:
        span = interp.span(node)
        bound(interp, "transpose", span, span.line)


ATTRIBUTE_SITES["array.T"] = _array_T
OPERATOR_SITES["array.@"] = matmul_operator


def _wrap_warp_level(name: str) -> None:
    original = MODELS[name]

    def wrapped(call: Call) -> Value:
        interp = call.interp
        _WARP_LEVEL[interp] = _WARP_LEVEL.get(interp, 0) + 1
        try:
            return original(call)
        finally:
            _WARP_LEVEL[interp] -= 1

    MODELS[name] = wrapped


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 40


def install() -> None:
    """Extend the models registered by other modules (called once by `registry.load_all`, after
    every model module was imported: importing this module changes no table)."""
    wrap_model(("jnp.dot", "jnp.matmul", "lax.dot"), _dot)
    wrap_model(("jnp.transpose", "lax.transpose"), _transpose)
    wrap_model(("jnp.swapaxes",), _swapaxes)
    wrap_model(("jnp.concatenate", "lax.concatenate"), lambda call, name: "concatenate" if _sequence(call, 2) else None)
    wrap_model(("jnp.stack",), lambda call, name: "stack" if _sequence(call, 1) else None)
    wrap_model(("jnp.argmax", "jnp.argmin"), lambda call, name: name.split(".")[1]
                if _axis(call.get(1, "axis", Const(None)), _ndim(call.get(0))) else None)
    _wrap_arg_methods()
    _wrap_transpose_method()
    _wrap_warp_level("plgpu.warp_map")
    _wrap_warp_level("pl.core_map()")

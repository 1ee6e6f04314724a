"""Scans, sorts and reversals of arrays along one axis, and the primitives they bind inside a
Mosaic GPU kernel: WG084 (rules/lowering_unimplemented_primitive.py).

`lax.cumsum(x, axis)`, `lax.sort(x, dimension)` and `lax.rev(x, dimensions)` bind `cumsum`, `sort`
and `rev` themselves: JAX 0.10.2 and 0.12.0.1 register no Mosaic GPU lowering rule for any of
them, and the lowering raises "Unimplemented primitive …" on the line that bound it.
`jnp.cumsum`, `jnp.sort` and `jnp.flip` bind the same primitives inside a `jit` of jnp's own: the
lowering reaches them through that call, and JAX's traceback then names no line of the kernel's
file (tests/fixtures/lowering_kernel/kernel_level_unimplemented_primitive_jnp.py), so the finding
is shown on the jnp call and blamed on the kernel's launch, as other kernel-level errors are.

Each model gives the array's shape (and dtype where JAX keeps it); only a single array and a
known axis are modelled (`axis=None` flattens a cumsum or sort, and is not, but for a 1-D array
cumsum, which keeps its shape).
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value
from wgmma_lsp.models import primitive_lowering
from wgmma_lsp.models.registry import model


def _axis(v: Value, ndim: int) -> bool:
    return isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool) \
        and -ndim <= v.value < ndim


def _axes(v: Value, ndim: int) -> bool:
    return _axis(v, ndim) or (isinstance(v, TupleVal) and bool(v.items) and all(_axis(a, ndim) for a in v.items))


def _same(call: Call, axis_key: str, axis_pos: int, default: Value | None, many: bool = False) -> Value:
    """The array, unchanged in shape, when the call's axis is known; UNKNOWN otherwise."""
    x = call.get(0)
    if not (isinstance(x, ArrayVal) and x.shape is not None and x.shape):
        return UNKNOWN
    axis = call.get(axis_pos, axis_key, default) if default is not None else call.get(axis_pos, axis_key)
    if not (_axes(axis, len(x.shape)) if many else _axis(axis, len(x.shape))):
        return UNKNOWN
    return ArrayVal(x.shape, x.dtype)


def _scan_dtype(out: Value) -> Value:
    """jnp.cumsum keeps floating and 32/64-bit integer dtypes (smaller integers are promoted)."""
    if isinstance(out, ArrayVal) and out.dtype is not None and not T.is_floating(out.dtype) \
            and not (T.is_integer(out.dtype) and T.itemsize_bits(out.dtype) >= 32):
        return ArrayVal(out.shape, None)
    return out


@model("lax.cumsum")
def _lax_cumsum(call: Call) -> Value:
    return _same(call, "axis", 1, Const(0))


@model("jnp.cumsum")
def _jnp_cumsum(call: Call) -> Value:
    if "dtype" in call.kwargs or len(call.args) > 2:
        return UNKNOWN
    x, axis = call.get(0), call.get(1, "axis", Const(None))
    if isinstance(axis, Const) and axis.value is None and isinstance(x, ArrayVal) \
            and x.shape is not None and len(x.shape) == 1:
        return _scan_dtype(ArrayVal(x.shape, x.dtype))  # axis=None ravels: a 1-D array as it is
    return _scan_dtype(_same(call, "axis", 1, None))


@model("lax.sort")
def _lax_sort(call: Call) -> Value:
    if set(call.kwargs) - {"dimension", "is_stable"} or len(call.args) > 2:
        return UNKNOWN  # several operands, num_keys: not modelled
    return _same(call, "dimension", 1, Const(-1))


@model("jnp.sort")
def _jnp_sort(call: Call) -> Value:
    if set(call.kwargs) - {"axis"}:
        return UNKNOWN
    return _same(call, "axis", 1, Const(-1))


@model("lax.rev")
def _lax_rev(call: Call) -> Value:
    return _same(call, "dimensions", 1, None, many=True)


@model("jnp.flip")
def _jnp_flip(call: Call) -> Value:
    return _same(call, "axis", 1, None, many=True)


#: The primitive each operation binds, and whether JAX's error names the line that bound it.
PRIMITIVES: dict[str, tuple[str, bool]] = {
    "lax.cumsum": ("cumsum", True), "lax.sort": ("sort", True), "lax.rev": ("rev", True),
    "jnp.cumsum": ("cumsum", False), "jnp.sort": ("sort", False), "jnp.flip": ("rev", False),
}


def _kernel_line(call: Call) -> int | None:
    span = call.interp.kernel.span  # the kernel's launch: JAX's traceback names no kernel line
    return span.line if span is not None else None


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 45


def install() -> None:
    """Check the primitive each model binds (called once by `registry.load_all`)."""
    for name, (primitive, own_line) in PRIMITIVES.items():
        primitive_lowering.wrap_model((name,), lambda call, name, p=primitive: p,
                                      None if own_line else _kernel_line)

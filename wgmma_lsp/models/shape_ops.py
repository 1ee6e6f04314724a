"""Shape-only array functions of `jax.lax` that are not in `array_reshapes.py`: `lax.collapse`."""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.dtypes import SymDType
from wgmma_lsp.interpret.values import (
    UNKNOWN, ArrayVal, Const, Opaque, OpaqueReplaced, SymInt, TupleVal, Value, as_dim,
)
from wgmma_lsp.models.arrays import as_array, elementwise
from wgmma_lsp.models.registry import model


@model("lax.collapse")
def _collapse(call: Call) -> Value:
    """`lax.collapse(operand, start_dimension, stop_dimension=None)` (jax/_src/lax/lax.py,
    `collapse`): dimensions `[start, stop)`, read as `slice(start, stop).indices(ndim)`, become
    one of their product; a range that ends before it starts raises (no value)."""
    operand = call.get(0, "operand")
    x = as_array(operand)
    if x is None:
        if isinstance(operand, Opaque) and not isinstance(operand, OpaqueReplaced):
            # an array known by name: its dtype is its own, its rank not known
            return ArrayVal(None, SymDType(f"{operand.name}.dtype"))
        return UNKNOWN
    start = call.get(1, "start_dimension")
    stop = call.get(2, "stop_dimension", Const(None) if call.complete else None)
    if x.shape is None or not isinstance(start, Const) or not isinstance(stop, Const) \
            or type(start.value) is not int or not (stop.value is None or type(stop.value) is int):
        return ArrayVal(None, x.dtype)
    lo, hi, _ = slice(start.value, stop.value).indices(len(x.shape))
    if hi < lo:
        return UNKNOWN  # JAX raises "Invalid dimension range passed to collapse"
    size: Dim = 1
    for d in x.shape[lo:hi]:
        size = D.mul(size, d)
    return ArrayVal(x.shape[:lo] + (size,) + x.shape[hi:], x.dtype)


@model("jnp.cumulative_sum", "jnp.cumulative_prod")
def _cumulative(call: Call) -> Value:
    """`jnp.cumulative_sum(x, axis=None, dtype=None, include_initial=False)`
    (jax/_src/numpy/reductions.py): the shape of x, one longer on `axis` with `include_initial`
    (axis may be omitted only for 1-D x); bools and narrow ints accumulate in the default int
    (int32 / uint32), other dtypes in their own, unless `dtype=` says."""
    from wgmma_lsp.interpret import dtypes as T
    from wgmma_lsp.interpret.dtypes import DType
    from wgmma_lsp.models.arrays import to_dtype

    x = as_array(call.get(0, "x"))
    if x is None or x.shape is None or not call.complete:
        return UNKNOWN
    axis = call.get(1, "axis", Const(None))
    include = call.get(99, "include_initial", Const(False))
    if not isinstance(axis, Const) or not isinstance(include, Const) or not isinstance(include.value, bool):
        return UNKNOWN
    ndim = len(x.shape)
    if axis.value is None:
        if ndim != 1:
            return UNKNOWN  # JAX raises: axis must be given for more than one dimension
        ax = 0
    elif type(axis.value) is int and -ndim <= axis.value < ndim:
        ax = axis.value % ndim
    else:
        return UNKNOWN
    shape = list(x.shape)
    if include.value:
        shape[ax] = D.add(shape[ax], 1)
    dt_arg = call.get(2, "dtype", Const(None))
    if not (isinstance(dt_arg, Const) and dt_arg.value is None):
        dt = to_dtype(dt_arg)
    elif x.dtype is None or x.dtype.symbolic:
        dt = None
    elif T.is_bool(x.dtype) or (T.is_signed_integer(x.dtype) and T.itemsize_bits(x.dtype) < 32):
        dt = DType("int32")
    elif T.is_unsigned_integer(x.dtype) and T.itemsize_bits(x.dtype) < 32:
        dt = DType("uint32")
    else:
        dt = DType(x.dtype.name)
    return ArrayVal(tuple(shape), dt)


def _cdiv_of_constants(call: Call) -> Value:
    a, b = call.get(0), call.get(1)
    if isinstance(a, Const) and isinstance(b, Const) and type(a.value) is int and type(b.value) is int \
            and b.value != 0 and len(call.args) == 2 and not call.kwargs:
        return Const(-(-a.value // b.value))
    return UNKNOWN


def _integer_array(a: Value, b: Value) -> Value:
    """`pl.cdiv` / `pl.align_to` with an array among the operands: the integer array of their
    broadcast shape and promoted dtype (`lax.div(a + (b - 1), b)`, times `b`); else unknown."""
    r = elementwise(a, b)
    if isinstance(r, ArrayVal) and r.dtype is not None and not r.dtype.symbolic and T.is_integer(r.dtype):
        return r
    return UNKNOWN


@model("pl.cdiv", "jax.cdiv")
def _cdiv(call: Call) -> Value:
    """`pl.cdiv(a, b)` (jax/_src/pallas/utils.py): of two ints, their ceiling quotient (for
    the non-negative `a` and positive `b` it is meant for); with an array among them,
    `lax.div(a + (b - 1), b)`: an array of their broadcast shape and promoted dtype."""
    a, b = call.get(0, "a"), call.get(1, "b")
    if isinstance(a, ArrayVal) or isinstance(b, ArrayVal):
        return _integer_array(a, b)
    if isinstance(a, Const) and isinstance(b, Const) and isinstance(a.value, int) and isinstance(b.value, int) \
            and a.value >= 0 and b.value > 0:
        return _cdiv_of_constants(call)
    if (isinstance(a, SymInt) or isinstance(b, SymInt)) and as_dim(a) is not None \
            and as_dim(b) is not None and len(call.args) + len(call.kwargs) == 2:
        d = D.cdiv(as_dim(a), as_dim(b))  # sizes: `pl.cdiv(q.shape[0], block_q)`
        if isinstance(d, D.Sym):
            return SymInt(d)
    return UNKNOWN


@model("pl.align_to")
def _align_to(call: Call) -> Value:
    """`pl.align_to(a, alignment)` (jax/_src/pallas/utils.py): `cdiv(a, alignment) * alignment`,
    `a` rounded up to a multiple of `alignment`. Of two ints (`a >= 0`, `alignment > 0`, where
    every JAX rounds alike); of sizes, symbolic; with an array among them, an integer array of
    their broadcast shape (as `pl.cdiv`'s)."""
    if len(call.args) + len(call.kwargs) != 2:
        return UNKNOWN
    a, b = call.get(0, "a"), call.get(1, "alignment")
    if isinstance(a, ArrayVal) or isinstance(b, ArrayVal):
        return _integer_array(a, b)
    if isinstance(a, Const) and isinstance(b, Const) and type(a.value) is int and type(b.value) is int:
        # (a negative operand: JAX's versions round differently — 0.10 floors `(a + b - 1) // b`,
        # 0.12 truncates as `lax.div` does; no claim there)
        if a.value >= 0 and b.value > 0:
            return Const(-(-a.value // b.value) * b.value)
        return UNKNOWN
    if (isinstance(a, SymInt) or isinstance(b, SymInt)) and as_dim(a) is not None and as_dim(b) is not None:
        d = D.mul(D.cdiv(as_dim(a), as_dim(b)), as_dim(b))
        return SymInt(d) if isinstance(d, D.Sym) else Const(d) if isinstance(d, int) else UNKNOWN
    return UNKNOWN


@model("jnp.searchsorted")
def _searchsorted(call: Call) -> Value:
    """`jnp.searchsorted(a, v, side='left', sorter=None, *, method='scan')`
    (jax/_src/numpy/lax_numpy.py): one int32 index per element of v (a 1-D)."""
    a, v = as_array(call.get(0, "a")), as_array(call.get(1, "v"))
    if a is None or v is None or a.shape is None or len(a.shape) != 1 or not call.complete:
        return UNKNOWN
    from wgmma_lsp.interpret.dtypes import DType

    return ArrayVal(v.shape, DType("int32"))


def _pad_pairs(v: Value, nd: int) -> list[tuple[Dim, Dim]] | None:
    """`jnp.pad`'s `pad_width` as one (before, after) pair per axis, as `_broadcast_to_pairs`
    (jax/_src/numpy/lax_numpy.py) reads the shapes it accepts: `(nd, 2)`, `(1, 2)`, `(2,)`,
    `(1,)` and `()`; an unknown width is None, any other form None (JAX raises)."""
    def size(x: Value) -> Dim:
        d = as_dim(x) if not isinstance(x, Opaque) else None
        return d

    if not isinstance(v, TupleVal):
        d = size(v)
        return [(d, d)] * nd if d is not None or isinstance(v, SymInt) else None
    items = v.items
    if items and all(isinstance(i, TupleVal) for i in items):
        rows = [i.items for i in items]  # type: ignore[union-attr]
        if any(len(r) != 2 for r in rows) or len(rows) not in (1, nd):
            return None
        pairs = [(size(a), size(b)) for a, b in rows]
        return pairs * nd if len(pairs) == 1 else pairs
    if any(isinstance(i, TupleVal) for i in items):
        return None
    if len(items) == 2:
        return [(size(items[0]), size(items[1]))] * nd
    if len(items) == 1:
        d = size(items[0])
        return [(d, d)] * nd
    return None


@model("jnp.pad")
def _pad(call: Call) -> Value:
    """`jnp.pad(array, pad_width, mode="constant", **kwargs)`: each axis grows by its
    (before, after) widths; the dtype stays. A width the interpreter does not know leaves that
    axis unknown; a negative one (JAX raises) or an unsupported `pad_width` leaves it all."""
    x = call.get(0, "array")
    widths = call.get(1, "pad_width")
    if not isinstance(x, ArrayVal) or x.shape is None or not call.complete:
        return UNKNOWN
    pairs = _pad_pairs(widths, len(x.shape))
    if pairs is None:
        return UNKNOWN
    shape: list[Dim] = []
    for d, (before, after) in zip(x.shape, pairs):
        if any(isinstance(w, int) and w < 0 for w in (before, after)):
            return UNKNOWN
        shape.append(D.add(D.add(d, before), after))
    return ArrayVal(tuple(shape), x.dtype)

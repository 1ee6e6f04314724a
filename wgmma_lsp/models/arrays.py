"""Abstract arrays as JAX operands: dtypes as values (`jnp.float32`) and as arguments
(`dtype=...`), weak types, broadcasting and promotion, the operators on arrays (`a + b`, `a @ b`,
`a == b`), their attributes (`x.shape`, `x.dtype`, `x.ndim`, `x.size`) and indexing, and
scalar types called (`jnp.int32(x)`, `jnp.dtype(...)`).

Mirrors `jax._src.numpy` (ufuncs, reductions, lax_numpy) and `jax._src.lax.lax` shape rules,
for the subset kernels use. Anything else returns UNKNOWN, never a guess. The jnp and lax
functions on arrays are modelled beside it: `array_constructors.py` (zeros, full, asarray,
arange, ShapeDtypeStruct), `array_reshapes.py` (astype, reshape, transpose, concatenate),
`array_elementwise.py` (ufuncs, where, dot) and `array_reductions.py` (sum, max, argmax).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import operators
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import (
    UNKNOWN, ApiVal, ArrayVal, Const, DTypeVal, Opaque, OpaqueReplaced, SymInt, UnknownInt,
    TupleVal, Value, as_shape, dim_value,
)
from wgmma_lsp.models import broadcasting
from wgmma_lsp.models.indexing import gather_shape, index_shape
from wgmma_lsp.models.registry import ATTRIBUTES, CONSTANTS, GETITEM, OPERATOR_SITES, attribute, model

FLOAT32 = DType("float32")
INT32 = DType("int32")
BOOL = DType("bool")

# -- dtypes as values -----------------------------------------------------------------------
for _name in T.DTYPE_NAMES:
    for _mod in ("jnp", "np", "jax.numpy", "ml_dtypes"):
        CONSTANTS[f"{_mod}.{_name}"] = DTypeVal(T.canonicalize(DType(_name)))
for _alias in ("float_", "int_", "bool_", "half", "single", "double", "complex_", "uint", "cfloat"):
    _c = T.canonical_name(_alias)
    if _c:
        for _mod in ("jnp", "np"):
            CONSTANTS[f"{_mod}.{_alias}"] = DTypeVal(T.canonicalize(DType(_c)))


def dtype_of(v: Value) -> DType | None:
    """The dtype a value has as a JAX operand (Python scalars are weakly typed)."""
    if isinstance(v, ArrayVal):
        return v.dtype
    if isinstance(v, Const) and isinstance(v.value, (bool, int, float, complex)):
        return T.python_scalar(v.value)
    if isinstance(v, (SymInt, UnknownInt)):
        return T.python_scalar(1)
    return None


def to_dtype(v: Value) -> DType | None:
    """A value used as a dtype argument (`jnp.float32`, `"bfloat16"`, `x.dtype`, `float`).

    A named unknown (a `dtype` parameter, `config.dtype` of an unknown config) is a symbolic
    dtype spelled by that name."""
    if isinstance(v, DTypeVal):
        return T.canonicalize(v.dtype)
    if isinstance(v, Opaque) and not isinstance(v, OpaqueReplaced):
        return T.SymDType(v.name)
    if isinstance(v, Const) and isinstance(v.value, str):
        name = T.canonical_name(v.value)
        return T.canonicalize(DType(name)) if name else None
    if isinstance(v, ApiVal) and v.name.startswith("builtins."):
        name = T.canonical_name(v.name.split(".", 1)[1])
        return T.canonicalize(DType(name)) if name else None
    return None


def as_array(v: Value) -> ArrayVal | None:
    if isinstance(v, ArrayVal):
        return v
    dt = dtype_of(v)
    if dt is not None:
        return ArrayVal((), dt)
    return None


def strong(dt: DType | None) -> DType | None:
    if dt is None or dt.symbolic:
        return dt  # symbolic dtypes are never weak
    return DType(dt.name)


# -- broadcasting and promotion -------------------------------------------------------------
def broadcast_shapes(*shapes: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    if any(s is None for s in shapes):
        return None
    n = max(len(s) for s in shapes)  # type: ignore[arg-type]
    out: list[Dim] = []
    for i in range(n):
        dims = [s[len(s) - n + i] for s in shapes if len(s) - n + i >= 0]  # type: ignore[arg-type]
        result: Dim = 1
        for d in dims:
            if D.equal(d, 1):
                continue
            if D.equal(result, 1):
                result = d
                continue
            e = D.equal(result, d)
            if e is not True:
                result = None
        out.append(result)
    return tuple(out)


def promote_values(*vals: Value) -> DType | None:
    dts = [dtype_of(v) for v in vals]
    if any(d is None for d in dts):
        return None
    return T.result_type(*dts)  # type: ignore[arg-type]


def elementwise(*vals: Value, dtype: DType | None = None) -> Value:
    arrays = [as_array(v) for v in vals]
    if any(a is None for a in arrays):
        return UNKNOWN
    shape = broadcast_shapes(*[a.shape for a in arrays])  # type: ignore[union-attr]
    dt = dtype if dtype is not None else promote_values(*vals)
    return ArrayVal(shape, dt)


def _float_result(dt: DType | None) -> DType | None:
    """Ops that produce floats (`/`, exp, mean) promote ints and bools to the default float."""
    if dt is None:
        return None
    if dt.symbolic:
        return None  # `x / y` is float32 for int arrays, x.dtype for float ones: unknown
    if T.is_floating(dt) or T.is_complex(dt):
        return dt
    return DType("float32", dt.weak)


#: Register layouts an elementwise operation keeps when the other operand is a Python number
#: (broadcast as a splat) or an array of the same layout (Mosaic GPU's FragmentedArray binary
#: ops). Extension modules add theirs when installed (models/planned_stores.py).
KEPT_LAYOUTS: set[str] = set()


def _kept_layout(left: Value, right: Value, result: ArrayVal) -> str | None:
    def number(v: Value) -> bool:
        return isinstance(v, Const) and type(v.value) in (int, float)

    for a, b in ((left, right), (right, left)):
        if isinstance(a, ArrayVal) and a.layout in KEPT_LAYOUTS and a.shape == result.shape \
                and (number(b) or (isinstance(b, ArrayVal) and b.layout == a.layout)):
            return a.layout
    return None


def array_binop(interp, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
    if not (isinstance(left, ArrayVal) or isinstance(right, ArrayVal)):
        return UNKNOWN
    if isinstance(op, ast.MatMult):  # and a check of the operator itself (WG084's dot_general)
        result = matmul(left, right)
        site = OPERATOR_SITES.get("array.@")
        return site(interp, left, right, node, result) if site is not None else result
    if broadcasting.raises(interp, op, left, right, node):
        return UNKNOWN  # JAX raises here
    result = elementwise(left, right)
    if not isinstance(result, ArrayVal):
        return UNKNOWN
    if isinstance(op, ast.Div):
        result = ArrayVal(result.shape, _float_result(result.dtype))
    layout = _kept_layout(left, right, result) if KEPT_LAYOUTS else None
    return replace(result, layout=layout) if layout is not None else result


def array_compare(interp, op: ast.cmpop, left: Value, right: Value) -> Value:
    if isinstance(op, (ast.Eq, ast.NotEq)):
        ld, rd = _compared_dtype(left), _compared_dtype(right)
        if ld is not None and rd is not None:  # `a.dtype != b.dtype`, `x.dtype == jnp.int8`
            same = T.same(ld, rd)  # a symbolic dtype equals itself only: else undecided
            if same is None:
                return UNKNOWN
            return Const(same if isinstance(op, ast.Eq) else not same)
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, TupleVal) and isinstance(right, TupleVal):
        # Tuples (shapes): equal when every item is; decided when each comparison is.
        same: bool | None = len(left.items) == len(right.items) and left.is_list == right.is_list
        if same:
            for a, b in zip(left.items, right.items):
                eq = operators.item_equal(interp, a, b)
                if not isinstance(eq, Const):
                    same = None
                elif not eq.value:
                    same = False
                    break
        if same is not None:
            return Const(same if isinstance(op, ast.Eq) else not same)
        return UNKNOWN
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, TupleVal):
        # `x in (a, b)`: decided when every item compares to x for sure.
        found: bool | None = False
        for item in right.items:
            eq = operators.item_equal(interp, left, item)
            if not isinstance(eq, Const):
                found = None
            elif eq.value:
                found = True
                break
        if found is not None:
            return Const(found if isinstance(op, ast.In) else not found)
        return UNKNOWN
    if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return UNKNOWN
    if isinstance(left, ArrayVal) or isinstance(right, ArrayVal):
        return elementwise(left, right, dtype=BOOL)
    return UNKNOWN


def _compared_dtype(v: Value) -> DType | None:
    """A dtype on one side of `==`: numpy compares dtypes (and scalar types such as `jnp.int8`)
    by the dtype they name."""
    if isinstance(v, DTypeVal) and v.dtype is not None and (v.dtype.symbolic or v.dtype.name in T.DTYPE_NAMES):
        return v.dtype
    return None


def matmul(a: Value, b: Value, out_dtype: DType | None = None) -> Value:
    x, y = as_array(a), as_array(b)
    if x is None or y is None:
        return UNKNOWN
    dt = out_dtype or promote_values(a, b)
    if x.shape is None or y.shape is None:
        return ArrayVal(None, strong(dt))
    if len(x.shape) == 2 and len(y.shape) == 2:
        return ArrayVal((x.shape[0], y.shape[1]), strong(dt))
    if len(x.shape) == 1 and len(y.shape) == 2:
        return ArrayVal((y.shape[1],), strong(dt))
    if len(x.shape) == 2 and len(y.shape) == 1:
        return ArrayVal((x.shape[0],), strong(dt))
    if len(x.shape) == 1 and len(y.shape) == 1:
        return ArrayVal((), strong(dt))
    return ArrayVal(None, strong(dt))


# -- shape and axis arguments (of the jnp and lax functions in the array_*.py modules) -------
def _shape_arg(v: Value) -> tuple[Dim, ...] | None:
    shape = as_shape(v)
    if shape is None and isinstance(v, Opaque):
        return None
    return shape


def _axes(v: Value, ndim: int) -> set[int] | None:
    items = v.items if isinstance(v, TupleVal) else (v,)
    out = set()
    for a in items:
        if not isinstance(a, Const) or not isinstance(a.value, int):
            return None
        out.add(a.value % ndim if ndim else a.value)
    return out


# -- attributes -----------------------------------------------------------------------------
@attribute("array.shape")
def _a_shape(obj: ArrayVal) -> Value:
    if obj.shape is None:
        return UNKNOWN
    return TupleVal(tuple(dim_value(d) for d in obj.shape))


@attribute("array.dtype")
def _a_dtype(obj: ArrayVal) -> Value:
    return DTypeVal(strong(obj.dtype), instance=True) if obj.dtype is not None else UNKNOWN  # type: ignore[arg-type]


@attribute("array.ndim")
def _a_ndim(obj: ArrayVal) -> Value:
    return Const(len(obj.shape)) if obj.shape is not None else UNKNOWN


@attribute("array.size")
def _a_size(obj: ArrayVal) -> Value:
    if obj.shape is None:
        return UNKNOWN
    total: Dim = 1
    for d in obj.shape:
        total = D.mul(total, d)
    return dim_value(total)


ATTRIBUTES["sds.shape"] = lambda o: _a_shape(o.array)
ATTRIBUTES["sds.dtype"] = lambda o: _a_dtype(o.array)
ATTRIBUTES["sds.ndim"] = lambda o: _a_ndim(o.array)
ATTRIBUTES["sds.size"] = lambda o: _a_size(o.array)
ATTRIBUTES["dtype.itemsize"] = lambda o: Const(T.itemsize_bits(o.dtype) // 8) \
    if not o.dtype.symbolic and T.itemsize_bits(o.dtype) >= 8 else UNKNOWN
ATTRIBUTES["dtype.name"] = lambda o: Const(o.dtype.name) if not o.dtype.symbolic else UNKNOWN
ATTRIBUTES["dtype.type"] = lambda o: o


def array_getitem(interp, obj: ArrayVal, index: Value, node) -> Value:
    shape = index_shape(obj.shape, index)
    return ArrayVal(shape if shape is not None else gather_shape(obj.shape, index),
                    strong(obj.dtype) if obj.dtype else None)


GETITEM["array"] = array_getitem


@model("dtype()")
def _dtype_call(call: Call) -> Value:
    """`jnp.int32(x)`, `jnp.float32(0)`: a scalar (or `x` converted) of that dtype
    (jax/_src/numpy/scalar_types.py: _ScalarMeta.__call__ is `asarray(x, dtype=...)`)."""
    dt = call.wrapped.dtype if isinstance(call.wrapped, DTypeVal) else None
    x = call.get(0)
    arr = as_array(x)
    if dt is None:
        return UNKNOWN
    dt = dt if dt.symbolic else T.canonicalize(DType(dt.name))  # strong
    if arr is not None:
        return ArrayVal(arr.shape, dt)
    if isinstance(x, (Const, SymInt)):
        return ArrayVal((), dt)
    return UNKNOWN


@model("jax._src.dtypes.itemsize_bits", "jax.dtypes.itemsize_bits")
def _itemsize_bits(call: Call) -> Value:
    """`dtypes.itemsize_bits(dtype)` (jax/_src/dtypes.py): the dtype's width in bits."""
    dt = to_dtype(call.get(0))
    if dt is None or dt.name not in T.DTYPE_NAMES:
        return UNKNOWN
    return Const(T.itemsize_bits(dt))


@model("pl.multiple_of")
def _multiple_of(call: Call) -> Value:
    """`pl.multiple_of(x, n)`: x, with a divisibility hint (pallas/primitives.py)."""
    return call.get(0)


@model("jnp.dtype", "np.dtype")
def _dtype(call: Call) -> Value:
    dt = to_dtype(call.get(0))
    return DTypeVal(dt, instance=True) if dt is not None else UNKNOWN


# jnp.finfo / jnp.iinfo / jnp.issubdtype: models/dtype_info.py

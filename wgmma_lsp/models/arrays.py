"""jax.numpy and jax.lax on abstract arrays: shapes, dtypes (with weak types), broadcasting.

Mirrors `jax._src.numpy` (ufuncs, reductions, lax_numpy) and `jax._src.lax.lax` shape rules,
for the subset kernels use. Anything else returns UNKNOWN, never a guess.
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
    UNKNOWN, ApiVal, ArrayVal, Const, DTypeVal, Opaque, OpaqueReplaced, ShapeDtypeVal, SymInt, UnknownInt,
    InstanceVal, TupleVal, Value, as_dim, as_shape, dim_value,
)
from wgmma_lsp.models import broadcasting, smem_budget
from wgmma_lsp.models.indexing import gather_shape, index_shape
from wgmma_lsp.models.registry import ATTRIBUTES, CONSTANTS, GETITEM, METHODS, OPERATOR_SITES, attribute, method, model

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


# -- constructors ---------------------------------------------------------------------------
def _shape_arg(v: Value) -> tuple[Dim, ...] | None:
    shape = as_shape(v)
    if shape is None and isinstance(v, Opaque):
        return None
    return shape


# Mosaic GPU gives constants built by jnp.zeros/ones/full a splat register layout (not WGMMA).
SPLAT = "splat"


@model("jnp.empty", "lax.zeros")
def _empty(call: Call) -> Value:
    dt = call.get(1, "dtype", Const(None))
    dtype = FLOAT32 if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(_shape_arg(call.get(0, "shape")), dtype, jax=True)


@model("jnp.zeros", "jnp.ones")
def _zeros(call: Call) -> Value:
    v = _empty(call)
    assert isinstance(v, ArrayVal)
    return ArrayVal(v.shape, v.dtype, SPLAT, jax=True)


@model("jnp.full")
def _full(call: Call) -> Value:
    shape = _shape_arg(call.get(0, "shape"))
    fill = call.get(1, "fill_value")
    dt = call.get(2, "dtype", Const(None))
    if isinstance(dt, Const) and dt.value is None:
        dtype = dtype_of(fill)
        if isinstance(fill, ArrayVal):
            dtype = strong(dtype)
    else:
        dtype = to_dtype(dt)
    return ArrayVal(shape, dtype, SPLAT if isinstance(fill, Const) else None, jax=True)


@model("jnp.zeros_like", "jnp.ones_like", "jnp.empty_like")
def _zeros_like(call: Call) -> Value:
    x = as_array(call.get(0))
    dt = call.get(1, "dtype", Const(None))
    shape_v = call.get(99, "shape", Const(None))
    if x is None:
        return UNKNOWN
    dtype = strong(x.dtype) if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    shape = x.shape if isinstance(shape_v, Const) and shape_v.value is None else _shape_arg(shape_v)
    return ArrayVal(shape, dtype, jax=True)


@model("jnp.full_like")
def _full_like(call: Call) -> Value:
    x = as_array(call.get(0))
    dt = call.get(2, "dtype", Const(None))
    if x is None:
        return UNKNOWN
    dtype = strong(x.dtype) if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(x.shape, dtype, jax=True)


def _literal_array(v: Value) -> ArrayVal | None:
    """A (nested) list/tuple of scalars and arrays as `np.array` reads it: its shape, and the
    (strong) dtype its items promote to; None when ragged or not all known."""
    if isinstance(v, TupleVal):
        items = [_literal_array(x) for x in v.items]
        if not items or any(i is None or i.shape is None or i.dtype is None for i in items):
            return None
        shape = items[0].shape  # type: ignore[union-attr]
        if any(D.shapes_equal(i.shape, shape) is not True for i in items):  # type: ignore[union-attr]
            return None
        dt = T.result_type(*[i.dtype for i in items])  # type: ignore[misc]
        return ArrayVal((len(items), *shape), strong(dt)) if dt is not None else None  # type: ignore[misc]
    return as_array(v)


@model("jnp.asarray")
def _asarray(call: Call) -> Value:
    """`jnp.asarray(a, dtype=None)` (and `jnp.array`): a Python scalar stays weakly typed, a
    list of scalars is strongly typed with the dtype its items promote to; an object of a user
    class defining `__jax_array__` is what that returns."""
    x = call.get(0)
    dt = call.get(1, "dtype", Const(None))
    if isinstance(x, InstanceVal):
        converted = operators.jax_array(call.interp, x)
        if converted is None:
            return UNKNOWN
        x = converted
    arr = _literal_array(x)
    if arr is None:
        return UNKNOWN
    if not (isinstance(dt, Const) and dt.value is None):
        return ArrayVal(arr.shape, strong(to_dtype(dt)), jax=True)
    if isinstance(x, ArrayVal):
        return x if x.jax else replace(x, jax=True)  # a NumPy array becomes a jax.Array
    return replace(arr, jax=True)  # a Python scalar keeps its weak type (`jnp.asarray(0.0)`); a list is strong


@model("jnp.arange")
def _arange(call: Call) -> Value:
    if len(call.args) == 1 and not call.kwargs.keys() - {"dtype"}:
        n = as_dim(call.args[0])
        dt = call.get(99, "dtype", Const(None))
        dtype = INT32 if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
        return ArrayVal((n,), dtype, jax=True)
    return UNKNOWN


@model("lax.broadcasted_iota", "plgpu.broadcasted_iota")
def _iota(call: Call) -> Value:
    return ArrayVal(_shape_arg(call.get(1, "shape")), to_dtype(call.get(0, "dtype")))


@model("jax.ShapeDtypeStruct")
def _sds(call: Call) -> Value:
    return ShapeDtypeVal(ArrayVal(_shape_arg(call.get(0, "shape")), to_dtype(call.get(1, "dtype"))))


@model("jax.ShapeDtypeStruct.like")
def _sds_like(call: Call) -> Value:
    """`jax.ShapeDtypeStruct.like(x)`: the shape and dtype of an array or of another
    ShapeDtypeStruct (a ref: JAX raises NotImplementedError, unknown here)."""
    x = call.get(0, "x")
    arr = x.array if isinstance(x, ShapeDtypeVal) else x if isinstance(x, ArrayVal) else None
    if arr is None:
        return UNKNOWN
    return ShapeDtypeVal(ArrayVal(arr.shape, arr.dtype))


# -- conversions and reshapes ---------------------------------------------------------------
def astype(x: Value, dt: Value, jax: bool = False) -> Value:
    """`x` as dtype `dt`: a JAX function's result is a jax.Array (`jax`), a method's is of the
    kind `x` was (NumPy's `astype` gives a NumPy array)."""
    arr = as_array(x)
    if arr is None:
        return UNKNOWN
    return ArrayVal(arr.shape, to_dtype(dt), arr.layout, jax=jax or arr.jax)


@method("array.astype")
def _m_astype(obj: Value, call: Call) -> Value:
    return astype(obj, call.get(0, "dtype"))


@model("jnp.astype", "lax.convert_element_type")
def _astype(call: Call) -> Value:
    return astype(call.get(0), call.get(1, "dtype" if "dtype" in call.kwargs else "new_dtype"), jax=True)


def reshape(x: ArrayVal, shape: tuple[Dim, ...] | None) -> Value:
    if shape is None:
        return ArrayVal(None, x.dtype)
    if any(isinstance(d, int) and d == -1 for d in shape):
        if sum(1 for d in shape if isinstance(d, int) and d == -1) != 1 or x.shape is None:
            return ArrayVal(None, x.dtype)
        total: Dim = 1
        for d in x.shape:
            total = D.mul(total, d)
        rest: Dim = 1
        for d in shape:
            if not (isinstance(d, int) and d == -1):
                rest = D.mul(rest, d)
        if D.equal(total, rest) is True:
            inferred: Dim = 1
        elif isinstance(rest, int) and rest > 0:
            inferred = D.floordiv(total, rest)
        else:
            inferred = None
        shape = tuple(inferred if isinstance(d, int) and d == -1 else d for d in shape)
    if x.shape is not None and _size(x.shape) is not None and _size(shape) is not None \
            and D.equal(_size(x.shape), _size(shape)) is False:
        return UNKNOWN  # JAX raises its own TypeError here ("cannot reshape array of shape ...")
    return ArrayVal(shape, x.dtype)


def _size(shape: tuple[Dim, ...]) -> Dim:
    total: Dim = 1
    for d in shape:
        if d is None:
            return None
        total = D.mul(total, d)
    return total


@method("array.reshape")
def _m_reshape(obj: Value, call: Call) -> Value:
    assert isinstance(obj, ArrayVal)
    if len(call.args) == 1:
        return reshape(obj, as_shape(call.args[0]))
    if "shape" in call.kwargs:
        return reshape(obj, as_shape(call.kwargs["shape"]))
    return reshape(obj, tuple(as_dim(a) for a in call.args))


@model("jnp.reshape", "lax.reshape")
def _reshape(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return reshape(x, as_shape(call.get(1, "shape" if "shape" in call.kwargs else "new_sizes")))


def transpose(x: ArrayVal, axes: Value | None) -> Value:
    if x.shape is None:
        return ArrayVal(None, x.dtype)
    if axes is None or (isinstance(axes, Const) and axes.value is None):
        return ArrayVal(tuple(reversed(x.shape)), x.dtype)
    if isinstance(axes, TupleVal):
        perm = [a.value if isinstance(a, Const) else None for a in axes.items]
        if all(isinstance(p, int) for p in perm) and sorted(perm) == list(range(len(x.shape))):  # type: ignore[type-var]
            return ArrayVal(tuple(x.shape[p] for p in perm), x.dtype)  # type: ignore[index]
    return ArrayVal(None, x.dtype)


@attribute("array.T")
def _a_T(obj: ArrayVal) -> Value:
    return transpose(obj, None)


@attribute("array.mT")
def _a_mT(obj: ArrayVal) -> Value:
    if obj.shape is None or len(obj.shape) < 2:
        return ArrayVal(None, obj.dtype)
    return ArrayVal(obj.shape[:-2] + (obj.shape[-1], obj.shape[-2]), obj.dtype)


@method("array.transpose")
def _m_transpose(obj: Value, call: Call) -> Value:
    assert isinstance(obj, ArrayVal)
    if not call.args:
        return transpose(obj, None)
    if len(call.args) == 1:
        return transpose(obj, call.args[0])
    return transpose(obj, TupleVal(tuple(call.args)))


@model("jnp.transpose", "lax.transpose")
def _transpose(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return transpose(x, call.get(1, "axes" if "axes" in call.kwargs else "permutation", Const(None)))


@model("jnp.swapaxes")
def _swapaxes(call: Call) -> Value:
    x = as_array(call.get(0))
    a, b = call.get(1), call.get(2)
    if x is None or x.shape is None or not (isinstance(a, Const) and isinstance(b, Const)):
        return UNKNOWN
    s = list(x.shape)
    try:
        s[a.value], s[b.value] = s[b.value], s[a.value]
    except Exception:
        return UNKNOWN
    return ArrayVal(tuple(s), x.dtype)


@model("jnp.broadcast_to", "lax.broadcast_in_dim")
def _broadcast_to(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return ArrayVal(_shape_arg(call.get(1, "shape")), strong(x.dtype) if isinstance(call.get(0), ArrayVal) else x.dtype)


@model("jnp.expand_dims")
def _expand_dims(call: Call) -> Value:
    x = as_array(call.get(0))
    ax = call.get(1, "axis")
    if x is None or x.shape is None or not isinstance(ax, Const) or not isinstance(ax.value, int):
        return UNKNOWN
    s = list(x.shape)
    pos = ax.value if ax.value >= 0 else len(s) + 1 + ax.value
    s.insert(pos, 1)
    return ArrayVal(tuple(s), x.dtype)


@model("jnp.squeeze")
def _squeeze(call: Call) -> Value:
    x = as_array(call.get(0))
    ax = call.get(1, "axis", Const(None))
    if x is None or x.shape is None:
        return UNKNOWN
    if isinstance(ax, Const) and ax.value is None:
        if all(isinstance(d, int) for d in x.shape):
            return ArrayVal(tuple(d for d in x.shape if d != 1), x.dtype)
        return ArrayVal(None, x.dtype)
    axes = _axes(ax, len(x.shape))
    if axes is None:
        return ArrayVal(None, x.dtype)
    return ArrayVal(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


@model("jnp.concatenate", "lax.concatenate")
def _concatenate(call: Call) -> Value:
    seq = call.get(0, "arrays" if "arrays" in call.kwargs else "operands")
    axis = call.get(1, "axis" if "axis" in call.kwargs else "dimension", Const(0))
    if not isinstance(seq, TupleVal) or not seq.items or not isinstance(axis, Const):
        return UNKNOWN
    arrays = [as_array(a) for a in seq.items]
    if any(a is None or a.shape is None for a in arrays):
        return UNKNOWN
    dt = promote_values(*seq.items)
    shapes = [a.shape for a in arrays]  # type: ignore[union-attr]
    ndim = len(shapes[0])  # type: ignore[arg-type]
    ax = axis.value if axis.value >= 0 else ndim + axis.value
    out = list(shapes[0])  # type: ignore[arg-type]
    total: Dim = 0
    for s in shapes:
        total = D.add(total, s[ax])  # type: ignore[index]
    out[ax] = total
    return ArrayVal(tuple(out), strong(dt))


@model("jnp.stack")
def _stack(call: Call) -> Value:
    seq = call.get(0)
    axis = call.get(1, "axis", Const(0))
    if not isinstance(seq, TupleVal) or not seq.items or not isinstance(axis, Const):
        return UNKNOWN
    first = as_array(seq.items[0])
    if first is None or first.shape is None:
        return UNKNOWN
    s = list(first.shape)
    ax = axis.value if axis.value >= 0 else len(s) + 1 + axis.value
    s.insert(ax, len(seq.items))
    return ArrayVal(tuple(s), strong(promote_values(*seq.items)))


# -- elementwise --------------------------------------------------------------------------
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "power", "remainder", "mod",
           "bitwise_and", "bitwise_or", "bitwise_xor", "floor_divide", "arctan2", "hypot",
           "copysign", "nextafter", "left_shift", "right_shift", "fmax", "fmin"]
_LAX_BINARY = ["add", "sub", "mul", "max", "min", "pow", "rem", "div", "atan2", "nextafter",
               "shift_left", "shift_right_logical", "shift_right_arithmetic", "bitwise_and",
               "bitwise_or", "bitwise_xor"]


def _binary(call: Call) -> Value:
    return elementwise(call.get(0), call.get(1))


for _n in _BINARY:
    model(f"jnp.{_n}")(_binary)
for _n in _LAX_BINARY:
    model(f"lax.{_n}")(_binary)


_COMPARE = ["logical_and", "logical_or", "logical_xor", "equal", "not_equal", "less", "less_equal",
            "greater", "greater_equal"]


def _bool_binary(call: Call) -> Value:
    """`jnp.logical_and(x, y)`, `jnp.less(x, y)`, ...: broadcast, bool result."""
    return elementwise(call.get(0), call.get(1), dtype=BOOL)


for _n in _COMPARE:
    model(f"jnp.{_n}")(_bool_binary)
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    model(f"lax.{_n}")(_bool_binary)


@model("jnp.divide", "jnp.true_divide")
def _divide(call: Call) -> Value:
    r = elementwise(call.get(0), call.get(1))
    return ArrayVal(r.shape, _float_result(r.dtype)) if isinstance(r, ArrayVal) else UNKNOWN


_FLOAT_UNARY = ["exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "tanh", "sin",
                "cos", "tan", "arctan", "arcsin", "arccos", "sinh", "cosh", "erf", "logistic",
                "reciprocal", "cbrt", "sigmoid", "softplus", "relu", "gelu", "silu", "log_softmax",
                "softmax", "atan", "asin", "acos", "erf_inv", "erfc", "lgamma", "digamma"]
_SAME_UNARY = ["abs", "negative", "neg", "sign", "floor", "ceil", "round", "square", "conj",
               "real", "imag", "clip", "positive", "integer_pow", "logical_not", "bitwise_not",
               "not_", "invert", "stop_gradient", "cumprod", "cummax",  # (cumsum, sort, flip: order_ops.py)
               "tril", "triu", "nan_to_num", "clamp"]


def _float_unary(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return ArrayVal(x.shape, _float_result(x.dtype))


def _same_unary(call: Call) -> Value:
    x = call.get(0)
    if x is not None and isinstance(x, ArrayVal):
        return x
    return UNKNOWN


for _n in _FLOAT_UNARY:  # jax.nn's activations: models/nn_activations.py
    for _m in ("jnp", "lax"):
        model(f"{_m}.{_n}")(_float_unary)
for _n in _SAME_UNARY:
    for _m in ("jnp", "lax"):
        model(f"{_m}.{_n}")(_same_unary)


@model("lax.optimization_barrier", "jax.lax.optimization_barrier")
def _optimization_barrier(call: Call) -> Value:
    """`lax.optimization_barrier(x)`: the same pytree of arrays."""
    x = call.get(0)
    return x if isinstance(x, (ArrayVal, TupleVal)) else UNKNOWN


@model("jnp.where", "lax.select")
def _where(call: Call) -> Value:
    if len(call.args) != 3:
        return UNKNOWN
    c, x, y = call.args
    r = elementwise(x, y)
    cc = as_array(c)
    if not isinstance(r, ArrayVal) or cc is None:
        return UNKNOWN
    return ArrayVal(broadcast_shapes(cc.shape, r.shape), r.dtype)


@model("jnp.dot", "jnp.matmul", "lax.dot")
def _dot(call: Call) -> Value:
    pet = call.get(99, "preferred_element_type", Const(None))
    out = None if isinstance(pet, Const) and pet.value is None else to_dtype(pet)
    return matmul(call.get(0), call.get(1), out)


# -- reductions -----------------------------------------------------------------------------
def _axes(v: Value, ndim: int) -> set[int] | None:
    items = v.items if isinstance(v, TupleVal) else (v,)
    out = set()
    for a in items:
        if not isinstance(a, Const) or not isinstance(a.value, int):
            return None
        out.add(a.value % ndim if ndim else a.value)
    return out


def reduce(x: Value, axis: Value, keepdims: Value, dtype_rule: str) -> Value:
    arr = as_array(x)
    if arr is None:
        return UNKNOWN
    dt = strong(arr.dtype)
    if dt is not None and dt.symbolic and dtype_rule in ("sum", "mean"):
        dt = None  # the sum of small ints widens, the mean of ints is a float: it depends
    if dt is not None:
        if dtype_rule == "sum" and (T.is_bool(dt) or (T.is_integer(dt) and T.itemsize_bits(dt) < 32)):
            dt = DType("uint32") if T.is_unsigned_integer(dt) else INT32
        elif dtype_rule == "mean":
            dt = _float_result(dt)
        elif dtype_rule == "arg":
            dt = INT32
        elif dtype_rule == "bool":
            dt = BOOL
    if arr.shape is None:
        return ArrayVal(None, dt)
    kd = keepdims.value if isinstance(keepdims, Const) else None
    if kd is None and not (isinstance(keepdims, Const)):
        return ArrayVal(None, dt)
    if isinstance(axis, Const) and axis.value is None:
        return ArrayVal(tuple(1 for _ in arr.shape) if kd else (), dt)
    axes = _axes(axis, len(arr.shape))
    if axes is None:
        return ArrayVal(None, dt)
    shape = tuple((1 if kd else None) if i in axes else d for i, d in enumerate(arr.shape))
    if not kd:
        shape = tuple(d for i, d in enumerate(arr.shape) if i not in axes)
    return ArrayVal(shape, dt)


def _reduction(rule: str, name: str):
    def fn(call: Call) -> Value:
        smem_budget.reduction(call.interp, name, call.span)  # a kernel's reduction scratch
        return reduce(call.get(0), call.get(1, "axis", Const(None)), call.get(99, "keepdims", Const(False)), rule)

    def meth(obj: Value, call: Call) -> Value:
        smem_budget.reduction(call.interp, name, call.span)
        return reduce(obj, call.get(0, "axis", Const(None)), call.get(99, "keepdims", Const(False)), rule)
    return fn, meth


for _n, _rule in {"sum": "sum", "prod": "sum", "max": "same", "min": "same", "amax": "same",
                  "amin": "same", "mean": "mean", "argmax": "arg", "argmin": "arg",
                  "any": "bool", "all": "bool", "var": "mean", "std": "mean"}.items():
    _f, _mt = _reduction(_rule, _n)
    model(f"jnp.{_n}")(_f)
    METHODS[f"array.{_n}"] = _mt


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

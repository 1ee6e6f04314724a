"""`jnp.finfo` / `jnp.iinfo` and `jnp.issubdtype`: facts of a known dtype, as NumPy and
ml_dtypes state them (numpy/_core/getlimits.py, ml_dtypes/_finfo.py, _iinfo.py); and
`jnp.promote_types` / `jnp.result_type`, JAX's promotion of known dtypes.

`bits` is a Python int; `iinfo(...).min`/`.max` are Python ints; `finfo(...).min`/`max`/`eps`/
`tiny` are NumPy scalars of the dtype itself, so as JAX operands they are strongly typed
scalars of that dtype (not weak Python floats): their values are not claimed, their type is.
A symbolic or unknown dtype, or the wrong kind (`finfo(int32)` raises), gives no value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import UNKNOWN, ApiVal, ArrayVal, Const, DTypeVal, Value
from wgmma_lsp.models.arrays import dtype_of, to_dtype
from wgmma_lsp.models.registry import ATTRIBUTES, CONSTANTS, model


@dataclass(frozen=True)
class DTypeInfoVal(Value):
    """`jnp.finfo(dtype)` (kind "f") or `jnp.iinfo(dtype)` (kind "i") of a concrete dtype."""

    kind: str
    dtype: DType

    def describe(self) -> str:
        return f"{'finfo' if self.kind == 'f' else 'iinfo'}({self.dtype})"


def _concrete(v: Value) -> DType | None:
    if isinstance(v, ArrayVal):  # finfo(x) of an array: of its dtype
        v = DTypeVal(v.dtype) if v.dtype is not None else UNKNOWN
    dt = to_dtype(v)
    return None if dt is None or dt.symbolic else T.canonicalize(DType(dt.name))


@model("jnp.finfo", "np.finfo")
def _finfo(call: Call) -> Value:
    dt = _concrete(call.get(0))
    if dt is None or not (T.is_floating(dt) or T.is_complex(dt)):
        return UNKNOWN
    return DTypeInfoVal("f", dt)


@model("jnp.iinfo", "np.iinfo")
def _iinfo(call: Call) -> Value:
    dt = _concrete(call.get(0))
    if dt is None or not T.is_integer(dt):
        return UNKNOWN
    return DTypeInfoVal("i", dt)


ATTRIBUTES["DTypeInfoVal.bits"] = lambda o: Const(T.itemsize_bits(o.dtype)) \
    if o.dtype.name != "bool" else UNKNOWN
ATTRIBUTES["DTypeInfoVal.dtype"] = lambda o: DTypeVal(o.dtype)


@dataclass(frozen=True)
class NumpyScalarVal(ArrayVal):
    """A NumPy scalar of a known value (`jnp.finfo(jnp.float32).tiny`): to JAX a strongly typed
    scalar of its dtype, to `float()` its value (`python_value`)."""

    python_value: float = field(default=0.0, compare=False)


#: `finfo` values (as `float()` of them gives them) of the dtypes whose values are stated here.
_FINFO: dict[str, dict[str, float]] = {
    "float16": {"min": -65504.0, "max": 65504.0, "eps": 0.0009765625, "tiny": 6.103515625e-05,
                "smallest_normal": 6.103515625e-05, "smallest_subnormal": 5.960464477539063e-08,
                "epsneg": 0.00048828125},
    "bfloat16": {"min": -3.3895313892515355e+38, "max": 3.3895313892515355e+38, "eps": 0.0078125,
                 "tiny": 1.1754943508222875e-38, "smallest_normal": 1.1754943508222875e-38,
                 "smallest_subnormal": 9.183549615799121e-41, "epsneg": 0.00390625},
    "float32": {"min": -3.4028234663852886e+38, "max": 3.4028234663852886e+38,
                "eps": 1.1920928955078125e-07, "tiny": 1.1754943508222875e-38,
                "smallest_normal": 1.1754943508222875e-38, "smallest_subnormal": 1.401298464324817e-45,
                "epsneg": 5.960464477539063e-08},
    "float64": {"min": -1.7976931348623157e+308, "max": 1.7976931348623157e+308,
                "eps": 2.220446049250313e-16, "tiny": 2.2250738585072014e-308,
                "smallest_normal": 2.2250738585072014e-308, "smallest_subnormal": 5e-324,
                "epsneg": 1.1102230246251565e-16},
}


def _float_fact(o: DTypeInfoVal, attr: str) -> Value:
    if o.kind != "f":
        return UNKNOWN
    value = _FINFO.get(o.dtype.name, {}).get(attr)
    if value is None:
        return ArrayVal((), o.dtype)  # a NumPy scalar of the float dtype, its value not stated
    return NumpyScalarVal((), o.dtype, python_value=value)


def _int_bound(o: DTypeInfoVal, which: str) -> Value:
    if o.kind != "i":
        return _float_fact(o, which)
    bits = T.itemsize_bits(o.dtype)
    if T.is_unsigned_integer(o.dtype):
        return Const(0 if which == "min" else 2 ** bits - 1)
    return Const(-(2 ** (bits - 1)) if which == "min" else 2 ** (bits - 1) - 1)


ATTRIBUTES["DTypeInfoVal.min"] = lambda o: _int_bound(o, "min")
ATTRIBUTES["DTypeInfoVal.max"] = lambda o: _int_bound(o, "max")
for _attr in ("eps", "tiny", "smallest_normal", "smallest_subnormal", "resolution", "epsneg"):
    ATTRIBUTES[f"DTypeInfoVal.{_attr}"] = lambda o, a=_attr: _float_fact(o, a)

#: The abstract scalar types of NumPy's hierarchy, by the kinds of dtype under each.
_ABSTRACT = {
    "floating": lambda d: T.is_floating(d),
    "complexfloating": lambda d: T.is_complex(d),
    "inexact": lambda d: T.is_floating(d) or T.is_complex(d),
    "integer": lambda d: T.is_integer(d),
    "signedinteger": lambda d: T.is_signed_integer(d),
    "unsignedinteger": lambda d: T.is_unsigned_integer(d),
    "number": lambda d: T.is_integer(d) or T.is_floating(d) or T.is_complex(d),
    "generic": lambda d: True,
}


@model("jnp.issubdtype", "np.issubdtype")
def _issubdtype(call: Call) -> Value:
    """`jnp.issubdtype(dtype, jnp.floating)`, or against a concrete dtype (equal names)."""
    a = _concrete(call.get(0, "arg1"))
    b = call.get(1, "arg2")
    if a is None:
        return UNKNOWN
    if isinstance(b, ApiVal) and b.name.split(".", 1)[0] in ("jnp", "np"):
        kind = _ABSTRACT.get(b.name.split(".", 1)[1])
        return Const(bool(kind(a))) if kind is not None else UNKNOWN
    other = _concrete(b) if isinstance(b, DTypeVal) else None
    return Const(a.name == other.name) if other is not None else UNKNOWN


# The float constants of jax.numpy and numpy (plain Python floats in both).
for _mod in ("jnp", "np"):
    for _name, _value in (("inf", float("inf")), ("nan", float("nan")), ("pi", math.pi),
                          ("e", math.e), ("euler_gamma", 0.5772156649015329)):
        CONSTANTS[f"{_mod}.{_name}"] = Const(_value)


@model("jnp.promote_types")
def _promote_types(call: Call) -> Value:
    """`jnp.promote_types(a, b)` of two known dtypes (not Python's scalar types, which JAX
    treats as weak): JAX's lattice (interpret/dtypes.py), a `numpy.dtype` object."""
    if len(call.args) != 2 or call.kwargs or not all(isinstance(a, (DTypeVal, Const)) for a in call.args):
        return UNKNOWN
    a, b = (to_dtype(x) for x in call.args)
    if type(a) is not DType or type(b) is not DType:
        return UNKNOWN
    out = T.promote_types(a, b)
    return DTypeVal(out, instance=True) if out is not None else UNKNOWN


#: `jnp.result_type` of a weakly typed result: the default type of its kind
#: (jax/_src/dtypes.py `result_type`: `default_types['f' if custom float else dtype.kind]`).
_WEAK_DEFAULT = {"f": "float32", "i": "int32", "u": "int32", "c": "complex64", "b": "bool"}


def _kind(d: DType) -> str:
    if T.is_bool(d):
        return "b"
    if T.is_floating(d):
        return "f"  # bfloat16 and the float8s too: JAX's custom floats default to float
    if T.is_complex(d):
        return "c"
    return "u" if T.is_unsigned_integer(d) else "i"


def _operand_dtype(v: Value) -> DType | None:
    """An argument of `jnp.result_type` as JAX types it: an array's dtype, a dtype (strong), a
    Python scalar (weak), `None` (the default float dtype); anything else is not known."""
    if isinstance(v, Const) and v.value is None:
        return DType("float32")
    if isinstance(v, ArrayVal) or (isinstance(v, Const) and isinstance(v.value, (bool, int, float, complex))):
        return dtype_of(v)
    if isinstance(v, DTypeVal) or (isinstance(v, Const) and isinstance(v.value, str)):
        dt = to_dtype(v)
        return dt if dt is None or dt.symbolic else DType(dt.name)
    return None


@model("jnp.result_type")
def _result_type(call: Call) -> Value:
    """`jnp.result_type(*arrays_or_dtypes)`: JAX's promotion of the operands' dtypes (the lattice
    of interpret/dtypes.py), a weakly typed result given as its kind's default type, as a
    `numpy.dtype` object. An operand whose dtype is not known, or promotion JAX refuses (the
    lattice has no bound), gives no value."""
    if not call.args or call.kwargs:
        return UNKNOWN
    operands = [_operand_dtype(a) for a in call.args]
    if any(d is None for d in operands):
        return UNKNOWN
    out = T.result_type(*operands)  # type: ignore[arg-type]
    if out is None:
        return UNKNOWN
    if not out.symbolic and out.weak:
        out = DType(_WEAK_DEFAULT[_kind(out)])
    return DTypeVal(out if out.symbolic else T.canonicalize(DType(out.name)), instance=True)

"""JAX's dtype model, reproduced in pure Python for the abstract interpreter.

Mirrors ``jax/_src/dtypes.py`` of jax 0.10.2 (with ``ml_dtypes`` 0.6) under
JAX's default configuration: ``jax_enable_x64=False``,
``jax_numpy_dtype_promotion='standard'``.  Nothing here imports jax or numpy;
``tests/test_dtypes.py`` checks every function differentially against real JAX.

Weak types: JAX attaches a ``weak_type`` flag to values that came from Python
scalars (``x + 1.0``).  A weak value takes part in promotion as its *Python
type* (``int``/``float``/``complex``), which sits low on the lattice, so it
adopts the width of its strong partner.  Here that is ``DType(name, weak=True)``.

Promotion failures (JAX raises ``TypePromotionError``; e.g. two different
float8 formats, or any sub-byte integer with anything but itself / a weak
int) are reported as ``None`` by :func:`promote`, :func:`result_type` and
:func:`promote_types`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Optional, Union

__all__ = [
    "DType", "DTYPE_NAMES", "canonical_name", "canonicalize", "python_scalar",
    "promote", "result_type", "promote_types", "is_floating", "is_integer",
    "is_signed_integer", "is_unsigned_integer", "is_complex", "is_bool",
    "itemsize_bits", "SymDType", "concrete", "same",
]


@dataclass(frozen=True)
class DType:
    """An abstract dtype: JAX dtype name plus the aval's ``weak_type`` flag."""

    name: str
    weak: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def symbolic(self) -> bool:
        return False


@dataclass(frozen=True)
class SymDType(DType):
    """A dtype known only by the expression the user wrote for it (`x.dtype`, a `dtype`
    parameter, `config.dtype`): printed by that spelling (`Ref<smem>{x.dtype[tile_m, tile_k]}`).

    It is a fixed but unknown dtype: equal to itself (two arrays of `x.dtype` have one dtype),
    undecided against any other dtype, and no fact (width, kind, promotion with other dtypes)
    is known about it. Checks read dtypes through :func:`concrete` (a symbolic dtype is unknown
    there) and compare them with :func:`same`, so a symbolic dtype never proves an error."""

    @property
    def symbolic(self) -> bool:
        return True


def concrete(d: DType | None) -> DType | None:
    """The dtype when it is a concrete one, None when it is unknown or only symbolic: what a
    check that needs the dtype's facts (its name, width or kind) may read."""
    return None if d is None or d.symbolic else d


def same(a: DType | None, b: DType | None) -> bool | None:
    """Are two dtypes (ignoring weak types) the same? None when undecided: either is unknown, or
    one is symbolic and they are not the same symbol (`x.dtype` against `bfloat16`, or against
    `y.dtype`)."""
    if a is None or b is None:
        return None
    if a.symbolic or b.symbolic:
        return True if a.symbolic and b.symbolic and a.name == b.name else None
    return a.name == b.name


# --- The dtype universe (jax/_src/dtypes.py: _bool_types, _int_types, ...) ---

UNSIGNED_NAMES: tuple[str, ...] = (
    "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64")
SIGNED_NAMES: tuple[str, ...] = (
    "int1", "int2", "int4", "int8", "int16", "int32", "int64")
# jax/_src/dtypes.py: _float8_dtypes / _float6_dtypes / _float4_dtypes.
FLOAT8_NAMES: tuple[str, ...] = (
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e5m3fnu")
FLOAT6_NAMES: tuple[str, ...] = ("float6_e2m3fn", "float6_e3m2fn")
FLOAT4_NAMES: tuple[str, ...] = ("float4_e2m1fn",)
#: Floats with no lattice edges: they only promote with themselves or weak
#: Python scalars (``small_float_types`` in ``_type_promotion_lattice``).
SMALL_FLOAT_NAMES: tuple[str, ...] = FLOAT4_NAMES + FLOAT6_NAMES + FLOAT8_NAMES
#: ``_custom_float_dtypes``: ml_dtypes floats (weak ones promote as ``float``).
CUSTOM_FLOAT_NAMES: tuple[str, ...] = SMALL_FLOAT_NAMES + ("bfloat16",)
FLOAT_NAMES: tuple[str, ...] = CUSTOM_FLOAT_NAMES + ("float16", "float32", "float64")
#: `_complex_types`; 0.12.1 adds ml_dtypes' 32-bit complex types, which promote with nothing but
#: themselves and weak Python complex scalars (`small_complex_types` in the lattice).
SMALL_COMPLEX_NAMES: tuple[str, ...] = ("bcomplex32", "complex32")
COMPLEX_NAMES: tuple[str, ...] = SMALL_COMPLEX_NAMES + ("complex64", "complex128")
#: Sub-byte integers (``_intn_dtypes``): no promotion except with themselves/weak int.
INTN_NAMES: tuple[str, ...] = ("int1", "uint1", "int2", "uint2", "int4", "uint4")

#: Every dtype some supported JAX promotes (``_jax_types``), in JAX's order: the dtypes of the
#: installed one are `dtype_names()`.
DTYPE_NAMES: tuple[str, ...] = (
    ("bool",) + UNSIGNED_NAMES + SIGNED_NAMES + FLOAT_NAMES + COMPLEX_NAMES)
#: The dtypes JAX 0.12.1 added (with ml_dtypes >= 0.5's types): older JAX has no such dtype.
NEW_IN_0_12_1: frozenset[str] = frozenset({"float8_e5m3fnu", "bcomplex32", "complex32"})


def dtype_names() -> tuple[str, ...]:
    """The dtypes the installed JAX promotes (``_jax_types``), in JAX's order."""
    from wgmma_lsp.interpret.jax_version import matches

    if matches(">=0.12.1"):
        return DTYPE_NAMES
    return tuple(n for n in DTYPE_NAMES if n not in NEW_IN_0_12_1)

_BITS: dict[str, int] = {"bool": 8}  # jax.dtypes.itemsize_bits: bool is 8 bits
for _n in UNSIGNED_NAMES + SIGNED_NAMES:
    _BITS[_n] = int(_n.removeprefix("u").removeprefix("int"))
for _n in SMALL_FLOAT_NAMES:
    _BITS[_n] = int(_n[5])
_BITS.update(bfloat16=16, float16=16, float32=32, float64=64,
             bcomplex32=32, complex32=32, complex64=64, complex128=128)


# --- Spellings --------------------------------------------------------------

#: Extra spellings accepted by :func:`canonical_name` (besides DTYPE_NAMES).
#: numpy/jnp scalar-type aliases keep numpy's (64-bit) meaning, exactly as
#: ``np.dtype(jnp.<alias>)``; apply :func:`canonicalize` for the x64-off result.
#: Python builtin type names map to JAX's default dtype for that kind with x64
#: off (``jax_dtype(float) == float32``) -- equal after canonicalize() to numpy's
#: ``np.dtype("float") == float64``, so either reading of ``"float"`` agrees.
ALIASES: dict[str, str] = {
    # Python builtins (jax/_src/dtypes.py: _DEFAULT_TYPEMAP, x64 off)
    "bool": "bool", "int": "int32", "float": "float32", "complex": "complex64",
    # numpy / jax.numpy scalar-type aliases
    "bool_": "bool", "int_": "int64", "uint": "uint64", "float_": "float64",
    "complex_": "complex128", "half": "float16", "single": "float32",
    "double": "float64", "csingle": "complex64", "cdouble": "complex128",
    "byte": "int8", "ubyte": "uint8", "short": "int16", "ushort": "uint16",
    "intc": "int32", "uintc": "uint32", "longlong": "int64",
    "ulonglong": "uint64", "intp": "int64", "uintp": "uint64",
    # numpy type-code strings (dtype="f4" etc.)
    "?": "bool", "b1": "bool",
    "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "f2": "float16", "f4": "float32", "f8": "float64",
    "c8": "complex64", "c16": "complex128",
}


def canonical_name(s: str) -> Optional[str]:
    """Map a dtype spelling (``"float32"``, ``"float_"``, ``"f4"``, ``float``) to
    its JAX dtype name, or ``None`` if JAX has no such dtype.

    Strips a ``jnp.``/``np.``/``numpy.``/``jax.numpy.``/``ml_dtypes.`` module
    prefix and a ``<``/``=`` byte-order prefix.  See :data:`ALIASES` for what
    each alias maps to.  The result is *not* x64-canonicalized.
    """
    s = s.strip()
    for prefix in ("jax.numpy.", "jnp.", "numpy.", "np.", "ml_dtypes."):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    if len(s) > 1 and s[0] in "<=|" and s[1:] in ALIASES:
        s = s[1:]
    if s in DTYPE_NAMES:
        return s
    return ALIASES.get(s)


# --- x64 canonicalization -----------------------------------------------------

# jax/_src/dtypes.py: _dtype_to_32bit_dtype
_TO_32BIT: dict[str, str] = {
    "int64": "int32", "uint64": "uint32", "float64": "float32",
    "complex128": "complex64",
}


def canonicalize(dtype: DType) -> DType:
    """``jax.dtypes.canonicalize_dtype`` with x64 off: 64-bit -> 32-bit.

    This is what an array holds: ``jnp.zeros((2,), jnp.float64).dtype`` is
    float32.  The weak flag is kept.
    """
    if dtype.symbolic:
        return dtype
    new = _TO_32BIT.get(dtype.name)
    return dtype if new is None else DType(new, dtype.weak)


# jax/_src/dtypes.py: default_types / _DEFAULT_TYPEMAP (x64 off)
_DEFAULT_FOR_PY: dict[str, str] = {"int": "int32", "float": "float32", "complex": "complex64"}


def python_scalar(value: object) -> DType:
    """Dtype of a Python scalar literal as JAX sees it (``_dtype_and_weaktype``).

    ``True`` -> strong ``bool`` (bool is not a weak type in JAX),
    ``1`` -> weak int32, ``1.0`` -> weak float32, ``1j`` -> weak complex64.
    """
    if isinstance(value, bool):
        return DType("bool")
    for typ in (int, float, complex):
        if isinstance(value, typ):
            return DType(_DEFAULT_FOR_PY[typ.__name__], weak=True)
    raise TypeError(f"not a Python scalar: {value!r}")


# --- The promotion lattice ----------------------------------------------------

# Lattice nodes are dtype names plus the three weak Python types below.
_PY_INT, _PY_FLOAT, _PY_COMPLEX = "<int>", "<float>", "<complex>"
_PY_NODES = (_PY_INT, _PY_FLOAT, _PY_COMPLEX)


def _lattice() -> dict[str, list[str]]:
    """``_type_promotion_lattice(strict=False, x64=False)``: node -> parents."""
    out: dict[str, list[str]] = {
        "bool": [_PY_INT],
        _PY_INT: ["uint8", "uint2", "uint4", "int8", "int2", "int4", "int1", "uint1"],
        "uint8": ["int16", "uint16"],
        "uint16": ["int32", "uint32"],
        # x64 mode has uint32 -> int64; with x64 off JAX uses int32 instead so
        # that no 64-bit type is formed from 32-bit inputs.
        "uint32": ["int32", "uint64"],
        "uint64": [_PY_FLOAT],
        "int8": ["int16"],
        "int16": ["int32"],
        "int32": ["int64"],
        "int64": [_PY_FLOAT],
        _PY_FLOAT: [*SMALL_FLOAT_NAMES, "bfloat16", "float16", _PY_COMPLEX],
        "bfloat16": ["float32"],
        "float16": ["float32"],
        "float32": ["float64", "complex64"],
        "float64": ["complex128"],
        _PY_COMPLEX: [*SMALL_COMPLEX_NAMES, "complex64"],
        "complex64": ["complex128"],
        "complex128": [],
    }
    for name in SMALL_FLOAT_NAMES + INTN_NAMES + SMALL_COMPLEX_NAMES:
        out[name] = []
    return out


def _upper_bounds(lattice: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """``_make_lattice_upper_bounds``: reflexive-transitive closure of the DAG."""
    ubs: dict[str, frozenset[str]] = {}

    def visit(n: str) -> frozenset[str]:
        if n not in ubs:
            ubs[n] = frozenset({n}).union(*(visit(p) for p in lattice[n]))
        return ubs[n]

    for node in lattice:
        visit(node)
    return ubs


_UB = _upper_bounds(_lattice())


@lru_cache(maxsize=1024)
def _least_upper_bound(nodes: frozenset[str]) -> Optional[str]:
    """``_least_upper_bound``; ``None`` where JAX raises TypePromotionError."""
    cub = frozenset.intersection(*(_UB[n] for n in nodes))
    lub = (cub & nodes) or {c for c in cub if cub <= _UB[c]}
    return next(iter(lub)) if len(lub) == 1 else None


def _jax_type(dtype: DType) -> str:
    """``_jax_type``: the lattice node a (dtype, weak_type) pair promotes as."""
    if not dtype.weak or dtype.name == "bool":
        return dtype.name
    if dtype.name in FLOAT_NAMES:
        return _PY_FLOAT
    if dtype.name in COMPLEX_NAMES:
        return _PY_COMPLEX
    return _PY_INT


def _node_dtype(node: str) -> DType:
    """``dtype(node)`` for a lattice node: weak Python types -> default dtype."""
    if node in _PY_NODES:
        return DType(_DEFAULT_FOR_PY[node[1:-1]], weak=True)
    return canonicalize(DType(node))


def _check(d: DType) -> DType:
    if d.name not in DTYPE_NAMES:
        raise ValueError(f"unknown dtype {d.name!r}")
    return d


def result_type(*dtypes: DType) -> Optional[DType]:
    """Dtype and weak flag of an elementwise op on arrays of these dtypes.

    Mirrors ``jax._src.dtypes.lattice_result_type`` (which ``jnp.add`` & co.
    use via ``promote_dtypes``), after canonicalizing inputs as arrays would be.
    Differs from public ``jnp.result_type`` only for weak *non-default* results
    (two weak bfloat16 -> weak bfloat16 here; ``jnp.result_type`` reports
    float32).  Returns ``None`` where JAX raises TypePromotionError.
    """
    if not dtypes:
        raise ValueError("at least one dtype is required")
    if any(d.symbolic for d in dtypes):
        # One symbolic dtype with itself stays that dtype; anything else depends on what the
        # symbol stands for (`x.dtype + 1.0` is float32 when x is an int array): unknown.
        first = dtypes[0]
        if all(d.symbolic and d.name == first.name for d in dtypes):
            return SymDType(first.name)
        return None
    ds = [canonicalize(_check(d)) for d in dtypes]
    if len(ds) == 1:
        out = ds[0]
    elif len({d.name for d in ds}) == 1 and not all(d.weak for d in ds):
        out = DType(ds[0].name)  # trivial promotion
    elif all(d.weak for d in ds):
        # All weak: bound of the strong counterparts, then re-apply weakness.
        node = _least_upper_bound(frozenset(d.name for d in ds))
        if node is None:
            return None
        out = DType(_node_dtype(node).name, weak=True)
    else:
        node = _least_upper_bound(frozenset(_jax_type(d) for d in ds))
        if node is None:
            return None
        out = _node_dtype(node)
    if out.name == "bool" and out.weak:
        out = DType("bool")
    return out


def promote(a: DType, b: DType) -> Optional[DType]:
    """Result dtype of the binary op ``a + b`` (see :func:`result_type`)."""
    return result_type(a, b)


def promote_types(a: Union[DType, str], b: Union[DType, str]) -> Optional[DType]:
    """``jnp.promote_types(a, b)``: a strong dtype, *not* x64-canonicalized.

    Unlike :func:`promote`, inputs are not canonicalized and the lattice node
    is returned as numpy names it: weak ints/floats/complex (JAX accepts the
    Python types ``int``/``float``/``complex``, pass ``DType(.., weak=True)``)
    become int64/float64/complex128.  E.g. ``promote_types(uint64, int64)`` is
    float64, while ``promote`` on those (canonicalized to uint32/int32) is int32.
    """
    da = _check(DType(a) if isinstance(a, str) else a)
    db = _check(DType(b) if isinstance(b, str) else b)
    node = _least_upper_bound(frozenset({_jax_type(da), _jax_type(db)}))
    if node is None:
        return None
    return DType({_PY_INT: "int64", _PY_FLOAT: "float64",
                  _PY_COMPLEX: "complex128"}.get(node, node))


# --- Kind predicates (jnp.issubdtype / jnp.isdtype) --------------------------

def _name(d: Union[DType, str]) -> str:
    return d if isinstance(d, str) else d.name


def is_bool(d: Union[DType, str]) -> bool:
    return _name(d) == "bool"


def is_floating(d: Union[DType, str]) -> bool:
    """Real floating, incl. ml_dtypes floats (``jnp.issubdtype(d, jnp.floating)``)."""
    return _name(d) in FLOAT_NAMES


def is_signed_integer(d: Union[DType, str]) -> bool:
    return _name(d) in SIGNED_NAMES


def is_unsigned_integer(d: Union[DType, str]) -> bool:
    return _name(d) in UNSIGNED_NAMES


def is_integer(d: Union[DType, str]) -> bool:
    """Signed or unsigned integer; bool is *not* an integer."""
    return is_signed_integer(d) or is_unsigned_integer(d)


def is_complex(d: Union[DType, str]) -> bool:
    return _name(d) in COMPLEX_NAMES


def itemsize_bits(name: Union[DType, str]) -> int:
    """``jax.dtypes.itemsize_bits``: logical bits per element (bool -> 8)."""
    n = _name(name)
    if n not in _BITS:
        raise ValueError(f"unknown dtype {n!r}")
    return _BITS[n]

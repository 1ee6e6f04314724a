"""Differential tests: wgmma_lsp.interpret.dtypes against real JAX (x64 off).

Ground truth is taken from what JAX actually does: the aval of ``x + y`` under
``jax.eval_shape`` (dtype and weak_type), ``jnp.result_type`` and
``jnp.promote_types``.  Every ordered pair of dtypes is its own test case.
"""

from __future__ import annotations

import itertools
import random
import warnings

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import dtypes as jax_dtypes  # noqa: E402

from wgmma_lsp.interpret import dtypes as D  # noqa: E402

# 64-bit requests are truncated with a UserWarning when x64 is off.
pytestmark = pytest.mark.filterwarnings("ignore:Explicitly requested dtype")

assert not jax.config.jax_enable_x64, "these tests assume JAX's default x64=False"

NAMES = list(D.dtype_names())  # the installed JAX's
PAIRS = list(itertools.product(NAMES, NAMES))
# Python scalars whose value fits every dtype (int1 holds only -1 and 0).
SCALARS = [False, 0, 0.0, 0j]


def np_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, name))


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def spec(name: str, weak: bool = False) -> jax.ShapeDtypeStruct:
    """An abstract scalar of dtype `name` as an array would hold it (JAX's own
    x64 canonicalization), optionally weakly typed."""
    dt = _quiet(lambda: jax.dtypes.canonicalize_dtype(np_dtype(name)))
    return jax.ShapeDtypeStruct((), dt, weak_type=weak)


def traced(fn, *specs):
    """Return fn's Python result when run on tracers for `specs`.

    Tracers, not constants: some dtypes (float6) have no CPU kernels, and
    constant folding of sub-byte casts fails in ml_dtypes after promotion
    already succeeded."""
    box = []
    _quiet(lambda: jax.eval_shape(lambda *xs: box.append(fn(*xs)), *specs))
    return box[0]


def observed(fn, *specs) -> D.DType | None:
    """dtype/weak_type of fn(*tracers)'s aval; None on TypePromotionError."""
    try:
        out = _quiet(lambda: jax.eval_shape(fn, *specs))
    except jax.dtypes.TypePromotionError:
        return None
    return D.DType(str(out.dtype), bool(out.weak_type))


def observed_sum(a, b) -> D.DType | None:
    """dtype/weak_type of `a + b`, for specs (traced) and Python scalars (as they are). JAX
    0.12.1's 32-bit complex dtypes (bcomplex32, complex32) promote, but `+` fails after promoting
    (TypeError: its conversion, `lax.complex`, takes float32/float64 parts only): where it fails
    for them, the truth is the promotion `+` performed first, `lattice_result_type`."""
    specs = [o for o in (a, b) if isinstance(o, jax.ShapeDtypeStruct)]

    def operands(xs):
        it = iter(xs)
        return [next(it) if isinstance(o, jax.ShapeDtypeStruct) else o for o in (a, b)]

    def add(*xs):
        x, y = operands(xs)
        return x + y

    if not any(str(t.dtype) in D.SMALL_COMPLEX_NAMES for t in specs):
        return observed(add, *specs)
    try:
        return observed(add, *specs)
    except TypeError:
        return traced(lambda *xs: _lattice_truth(*operands(xs)), *specs)


def jnp_result_type(*args) -> str | None:
    try:
        return str(_quiet(lambda: jnp.result_type(*args)))
    except jax.dtypes.TypePromotionError:
        return None


def jnp_promote_types(a, b) -> str | None:
    try:
        return str(jnp.promote_types(a, b))
    except jax.dtypes.TypePromotionError:
        return None


def name_of(d: D.DType | None) -> str | None:
    return None if d is None else d.name


# --- the dtype universe -------------------------------------------------------

def test_dtype_names_match_jax():
    assert list(D.dtype_names()) == [str(t) for t in jax_dtypes._jax_types]
    assert set(D.dtype_names()) <= set(D.DTYPE_NAMES)


def test_dtype_str_and_default_weak():
    assert str(D.DType("bfloat16")) == "bfloat16"
    assert D.DType("int8") != D.DType("int8", weak=True)


@pytest.mark.parametrize("name", NAMES)
def test_kind_predicates(name):
    dt = np_dtype(name)
    assert D.is_floating(name) == bool(jnp.issubdtype(dt, jnp.floating))
    assert D.is_integer(name) == bool(jnp.issubdtype(dt, jnp.integer))
    assert D.is_signed_integer(name) == bool(jnp.issubdtype(dt, jnp.signedinteger))
    assert D.is_unsigned_integer(name) == bool(jnp.issubdtype(dt, jnp.unsignedinteger))
    assert D.is_complex(name) == bool(jnp.issubdtype(dt, jnp.complexfloating))
    assert D.is_bool(D.DType(name)) == (dt == np.dtype(bool))
    assert D.itemsize_bits(name) == jax.dtypes.itemsize_bits(dt)


@pytest.mark.parametrize("name", NAMES)
def test_canonicalize_matches_array_creation(name):
    got = D.canonicalize(D.DType(name))
    assert got == observed(lambda: jnp.zeros((), np_dtype(name)))
    assert D.canonicalize(D.DType(name, weak=True)) == D.DType(got.name, weak=True)


# --- spellings ---------------------------------------------------------------

BUILTINS = {"bool": bool, "int": int, "float": float, "complex": complex}
ATTR_SPELLINGS = ["bool_", "int_", "uint", "float_", "complex_", "single", "double",
                  "csingle", "cdouble"]
NUMPY_ONLY = ["half", "byte", "ubyte", "short", "ushort", "intc", "uintc",
              "longlong", "ulonglong", "intp", "uintp"]
CODES = ["?", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
         "c8", "c16", "<f4", "=i8"]


@pytest.mark.parametrize("s", sorted(set(NAMES) - set(BUILTINS)))
def test_canonical_name_of_dtype_names(s):
    assert D.canonical_name(s) == s == str(np_dtype(s))
    assert D.canonical_name("jnp." + s) == s


@pytest.mark.parametrize("s", sorted(BUILTINS))
def test_canonical_name_python_builtins(s):
    # JAX's default dtype for the builtin type (x64 off), e.g. dtype=float.
    assert D.canonical_name(s) == str(jnp.zeros((), BUILTINS[s]).dtype)
    # ...and the string spelling dtype="float" (numpy: float64) agrees once
    # canonicalized.
    assert D.canonicalize(D.DType(D.canonical_name(s))) == observed(lambda: jnp.zeros((), s))


@pytest.mark.parametrize("s", ATTR_SPELLINGS + NUMPY_ONLY + CODES)
def test_canonical_name_aliases(s):
    obj = getattr(jnp, s, None) or getattr(np, s, None) or s
    assert D.canonical_name(s) == str(np.dtype(obj))
    assert D.canonicalize(D.DType(D.canonical_name(s))) == observed(lambda: jnp.zeros((), obj))


@pytest.mark.parametrize("s", ["f32", "float128", "longdouble", "object_", "str", "float0",
                               "bf16", "", "int3"])
def test_canonical_name_unknown(s):
    assert D.canonical_name(s) is None


# --- Python scalars ----------------------------------------------------------

@pytest.mark.parametrize("value", [True, False, 1, 0, -3, 1.0, 2.5, 1j, 0j])
def test_python_scalar(value):
    dt, weak = jax_dtypes.lattice_result_type(value)
    assert D.python_scalar(value) == D.DType(str(dt), bool(weak))
    aval = jax.eval_shape(lambda: jnp.asarray(value))
    assert D.python_scalar(value) == D.DType(str(aval.dtype), bool(aval.weak_type))


def test_python_scalar_rejects_non_scalars():
    with pytest.raises(TypeError):
        D.python_scalar("1.0")


# --- strong x strong -----------------------------------------------------------

@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_strong_pair(a, b):
    """`x + y` for two strongly typed arrays, and jnp.result_type on dtypes."""
    got = D.promote(D.DType(a), D.DType(b))
    want = observed_sum(spec(a), spec(b))
    assert got == want
    assert name_of(got) == jnp_result_type(np_dtype(a), np_dtype(b))


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_types_strong_pair(a, b):
    """jnp.promote_types: no x64 canonicalization of inputs or output."""
    assert name_of(D.promote_types(a, b)) == jnp_promote_types(np_dtype(a), np_dtype(b))


# --- dtype x weak Python scalar ---------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda v: type(v).__name__)
def test_promote_with_python_scalar(name, scalar):
    got = D.promote(D.DType(name), D.python_scalar(scalar))
    assert got == observed_sum(spec(name), scalar)
    assert got == observed_sum(scalar, spec(name))
    assert name_of(got) == traced(lambda x: jnp_result_type(x, scalar), spec(name))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("typ", [int, float, complex], ids=lambda t: t.__name__)
def test_promote_types_with_python_type(name, typ):
    weak = D.DType(D.canonical_name(typ.__name__), weak=True)
    assert name_of(D.promote_types(name, weak)) == jnp_promote_types(np_dtype(name), typ)
    assert name_of(D.promote_types(weak, name)) == jnp_promote_types(typ, np_dtype(name))


# --- weak arrays -------------------------------------------------------------------

@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_weak_weak(a, b):
    got = D.promote(D.DType(a, weak=True), D.DType(b, weak=True))
    assert got == observed_sum(spec(a, True), spec(b, True))


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_weak_strong(a, b):
    got = D.promote(D.DType(a, weak=True), D.DType(b))
    assert got == observed_sum(spec(a, True), spec(b))
    assert D.promote(D.DType(b), D.DType(a, weak=True)) == got


# --- n-ary result_type ----------------------------------------------------------------

_rng = random.Random(1234)
TRIPLES = [tuple((_rng.choice(NAMES), _rng.random() < 0.4) for _ in range(3))
           for _ in range(400)]


def _lattice_truth(*arrays) -> D.DType | None:
    try:
        dt, weak = jax_dtypes.lattice_result_type(*arrays)
    except jax.dtypes.TypePromotionError:
        return None
    return D.DType(str(dt), bool(weak))


@pytest.mark.parametrize("triple", TRIPLES, ids=lambda t: ",".join(
    n + ("~" if w else "") for n, w in t))
def test_result_type_triples(triple):
    got = D.result_type(*(D.DType(n, w) for n, w in triple))
    assert got == traced(_lattice_truth, *(spec(n, w) for n, w in triple))


def test_result_type_single_and_empty():
    assert D.result_type(D.DType("float64")) == D.DType("float32")
    assert D.result_type(D.DType("bfloat16", weak=True)) == D.DType("bfloat16", weak=True)
    with pytest.raises(ValueError):
        D.result_type()


# --- spot checks documenting the surprising corners --------------------------------

W = lambda n: D.DType(n, weak=True)  # noqa: E731
S = D.DType


@pytest.mark.parametrize("a,b,want", [
    (S("uint32"), S("int32"), S("int32")),          # x64 off: no int64 formed
    (S("uint32"), S("int16"), S("int32")),
    (S("uint64"), S("int64"), S("int32")),          # inputs canonicalized first
    (S("int8"), W("float32"), W("float32")),        # int + weak float -> weak f32
    (S("int4"), W("float32"), None),                # sub-byte ints reject floats
    (S("int4"), W("int32"), S("int4")),
    (S("uint32"), S("float16"), S("float16")),      # ints never widen a float
    (S("bfloat16"), S("float16"), S("float32")),
    (S("bfloat16"), W("complex64"), S("complex64")),  # strong, not weak!
    (S("float8_e4m3fn"), W("float32"), S("float8_e4m3fn")),
    (S("float8_e4m3fn"), S("float8_e5m2"), None),
    (S("float8_e4m3fn"), S("bfloat16"), None),
    (S("bool"), W("int32"), W("int32")),
    (W("bool"), W("bool"), S("bool")),              # bool is never weak
    (W("int32"), W("float32"), W("float32")),
    (W("bfloat16"), S("int8"), W("float32")),       # weak bf16 promotes as `float`
    (W("bfloat16"), W("int8"), W("bfloat16")),      # all-weak: strong bound, re-weakened
])
def test_documented_corners(a, b, want):
    assert D.promote(a, b) == want


def test_promote_types_differs_from_promote():
    assert D.promote_types("uint64", "int64") == S("float64")
    assert D.promote_types(W("float32"), W("int32")) == S("float64")
    assert D.promote(S("uint64"), S("int64")) == S("int32")

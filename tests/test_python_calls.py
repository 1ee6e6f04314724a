"""Functions and calls as Python runs them: decorators of any form, `functools.partial`,
`*args`/`**kwargs`, closures, wrappers that choose the body, `lax.cond`/`lax.switch` branches.

CPython is the spec: each program runs in CPython and through the interpreter (as module code),
and every value the interpreter claims for the names checked must be CPython's. Where a program
uses JAX, JAX's own abstract evaluation (`jax.eval_shape`) is the spec for shapes and dtypes.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import types
from typing import Any

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.interp import Interpreter
from wgmma_lsp.interpret.values import ArrayVal, Const, DictVal, SetVal, TupleVal, Value
from wgmma_lsp.spans import LineIndex

HEADER = """\
import functools
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def _python(v: Value) -> Any:
    """The Python value the interpreter claims, or raises LookupError where it claims none."""
    if isinstance(v, Const):
        return v.value
    if getattr(v, "spoiled", False):
        raise LookupError(f"spoiled: {v.describe()}")
    if isinstance(v, TupleVal):
        items = [_python(i) for i in v.items]
        return items if v.is_list else tuple(items)
    if isinstance(v, DictVal):
        return {k: _python(i) for k, i in v.items}
    if isinstance(v, SetVal):
        elements = [_python(i) for i in v.items]
        return frozenset(elements) if v.frozen else set(elements)
    raise LookupError(v.describe())


def interpreted(source: str) -> dict[str, Value]:
    tree = ast.parse(source)
    interp = Interpreter(source, tree, LineIndex(source))
    interp.run_module()
    return dict(interp.module_env.vars)


def run_cpython(source: str) -> dict[str, Any]:
    """The module namespace after CPython ran `source` (as a module of its own: dataclasses
    look their module up in sys.modules)."""
    module = types.ModuleType("__program__")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "<program>", "exec"), module.__dict__)  # noqa: S102 - the test's own
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def agree(source: str, *names: str) -> None:
    """The interpreter knows each of `names` after the module ran, and CPython agrees."""
    namespace = run_cpython(source)
    got = interpreted(source)
    for name in names:
        assert name in got, name
        try:
            claimed = _python(got[name])
        except LookupError as e:
            raise AssertionError(f"{name}: the interpreter claims nothing ({e})") from None
        actual = namespace[name]
        assert type(claimed) is type(actual) and claimed == actual, (name, claimed, actual)


def aval(source: str, name: str) -> str:
    """What the interpreter holds for `name` after the module ran, as `dtype[shape]`."""
    v = interpreted(source)[name]
    assert isinstance(v, ArrayVal), v.describe()
    return v.describe()


def jax_aval(source: str, name: str) -> str:
    namespace: dict[str, Any] = {"__name__": "__program__"}
    exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102 - the test's own program
    x = namespace[name]
    return f"{x.dtype}[{','.join(str(d) for d in x.shape)}]"


def severities(source: str) -> list[tuple[str, Severity]]:
    return [(d.code, d.severity) for d in diagnostics(analyze(HEADER + source))]


# -- typing constructs are inert -------------------------------------------------------------

@pytest.mark.skipif(importlib.util.find_spec("jaxtyping") is None, reason="jaxtyping not installed")
def test_jaxtyped_functions_run_their_bodies() -> None:
    agree("""
import jaxtyping
from jaxtyping import Array, Float

checked = jaxtyping.jaxtyped(typechecker=None)

@checked
def tiles(x: Float[Array, "*B M K"], tile: int) -> int:
    return x * 2 // tile

@jaxtyping.jaxtyped(typechecker=None)
def twice(n: int) -> int:
    return 2 * n

A = tiles(256, 64)
B = twice(A)
""", "A", "B")


# -- jax.lax shape functions -----------------------------------------------------------------

@pytest.mark.parametrize("start, stop", [(0, -1), (0, 2), (1, None), (0, None), (2, 3), (-2, None)])
def test_lax_collapse_shapes_as_jax(start: int, stop: int | None) -> None:
    source = f"""
import jax
import jax.numpy as jnp
x = jax.ShapeDtypeStruct((4, 6, 8, 2), jnp.bfloat16)
y = jax.eval_shape(lambda a: jax.lax.collapse(a, {start}, {stop}), x)
"""
    ours = f"""
import jax
import jax.numpy as jnp
x = jnp.zeros((4, 6, 8, 2), jnp.bfloat16)
y = jax.lax.collapse(x, {start}, {stop})
"""
    assert aval(ours, "y") == jax_aval(source, "y")


@pytest.mark.parametrize("name", ["swish", "silu", "relu", "gelu", "sigmoid", "softplus", "elu",
                                  "leaky_relu", "hard_tanh", "log_softmax", "softmax"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int32", "bool_"])
def test_jax_nn_activations_as_jax(name: str, dtype: str) -> None:
    """Same shape and dtype on floats, as JAX computes; on ints and bools JAX differs per
    function (int32 kept, float32, or a TypeError): no value is claimed there."""
    import jax
    import jax.numpy as jnp

    ours = interpreted(f"import jax\nimport jax.numpy as jnp\n"
                       f"y = jax.nn.{name}(jnp.zeros((4, 8), jnp.{dtype}))\n")["y"]
    if dtype not in ("bfloat16", "float32"):
        assert not isinstance(ours, ArrayVal), ours.describe()
        return
    r = jax.eval_shape(getattr(jax.nn, name), jax.ShapeDtypeStruct((4, 8), getattr(jnp, dtype)))
    assert ours.describe() == f"{r.dtype}[{','.join(map(str, r.shape))}]"


# -- *args and **kwargs ----------------------------------------------------------------------

def test_star_args_and_kwargs_both_ways() -> None:
    agree("""
def f(a, b=2, *rest, c, d=4, **extra):
    return (a, b, rest, c, d, extra)

def g(*args, **kwargs):
    return f(*args, **kwargs)

base = {"c": 3}
A = f(1, c=3)
B = g(1, 5, 6, 7, **base, e=8)
C = g(*[1, 2], *(3,), **base, d=9)
D = f(*range(3), c=0)
""", "A", "B", "C", "D")


def test_a_positional_argument_after_an_unknown_star_has_no_known_place() -> None:
    got = interpreted("""
def f(a, b=10):
    return b

def g(xs):
    return f(*xs, 5)

R = g(unknown_list())
""")
    assert not (isinstance(got["R"], Const) and got["R"].value == 10)  # CPython: 5 or a TypeError


# -- decorators of any form --------------------------------------------------------------------

def test_class_decorators_are_applied_as_python_applies_them() -> None:
    source = """
import dataclasses
import typing

REGISTRY = []

def register(cls):
    REGISTRY.append(cls.__name__ if False else 1)
    return cls

def replaced(cls):
    return 42

@register
@dataclasses.dataclass(frozen=True)
class Config:
    tile_m: int = 128
    tile_n: int = 64

@replaced
class Gone:
    x: int = 1

@typing.final
@dataclasses.dataclass
class Final:
    n: int = 3

A = Config(tile_n=32).tile_n
B = Config().tile_m
C = Gone
D = Final(n=5).n
"""
    agree(source, "A", "B", "C", "D")
    assert interpreted(source.replace("@replaced", "@some_unknown_decorator").replace(
        "C = Gone", "C = Gone.x"))["C"].describe().startswith("unknown")


@pytest.mark.skipif(importlib.util.find_spec("pydantic") is None, reason="pydantic not installed")
def test_pydantic_dataclasses_take_their_fields_from_the_call() -> None:
    agree("""
import pydantic

@pydantic.dataclasses.dataclass(frozen=True)
class Config:
    tile_m: int = 128
    tile_k: pydantic.PositiveInt = 128
    stages: int = 4

c = Config(tile_m=64, tile_k=32)
A = (c.tile_m, c.tile_k, c.stages)
""", "A")


# -- dtype facts -------------------------------------------------------------------------------

_DTYPES = ["bfloat16", "float16", "float32", "float8_e4m3fn", "int8", "int32", "uint8", "uint32",
           "int4", "bool_"]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_dtype_facts_as_numpy_states_them(dtype: str) -> None:
    """`finfo(...).bits`, `iinfo(...).min/max`, `issubdtype` against each abstract kind: what
    the interpreter claims is what jax.numpy answers (finfo of an int raises: no claim)."""
    kinds = ["floating", "inexact", "integer", "signedinteger", "unsignedinteger", "number",
             "complexfloating", "generic"]
    lines = ["import jax.numpy as jnp", f"d = jnp.{dtype}"]
    names = []
    for i, kind in enumerate(kinds):
        lines.append(f"S{i} = jnp.issubdtype(d, jnp.{kind})")
        names.append(f"S{i}")
    lines.append("E = jnp.issubdtype(d, jnp.float32)")
    names.append("E")
    if dtype in ("bfloat16", "float16", "float32", "float8_e4m3fn"):
        lines.append("B = jnp.finfo(d).bits")
        names.append("B")
    elif dtype != "bool_":
        lines += ["B = jnp.iinfo(d).bits", "LO = int(jnp.iinfo(d).min)", "HI = int(jnp.iinfo(d).max)"]
        names += ["B", "LO", "HI"]
    agree("\n".join(lines) + "\n", *names)


def test_finfo_bounds_are_scalars_of_their_dtype() -> None:
    """`jnp.finfo(jnp.float32).max` is a NumPy float32: in JAX arithmetic with a bf16 array it
    promotes to float32 (a Python float would stay bf16)."""
    import jax
    import jax.numpy as jnp

    source = """
import jax.numpy as jnp
x = jnp.zeros((8,), jnp.bfloat16)
y = x + jnp.finfo(jnp.float32).max
"""
    ours = interpreted(source)["y"]
    real = jax.eval_shape(lambda x: x + jnp.finfo(jnp.float32).max,
                          jax.ShapeDtypeStruct((8,), jnp.bfloat16))
    assert ours.describe() == f"{real.dtype}[{real.shape[0]}]"


# -- a call that raises ends the path, as a `raise` does ------------------------------------------

def test_code_after_a_call_that_always_raises_never_runs() -> None:
    """`check(64)` raises on every path (directly, through a helper, in `__init__`): CPython never
    runs the store after it, so nothing is reported there."""
    assert severities("""
def check(n):
  if n < 128:
    raise ValueError("too small")

def deeper(n):
  check(n)

class Config:
  def __init__(self, n):
    assert n >= 128
    self.n = n

def kernel(a_ref):
  def body(acc_ref):
    check(64)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  def body2(acc_ref):
    deeper(64)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  def body3(acc_ref):
    Config(64)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
  pl.run_scoped(body2, plgpu.ACC((64, 128)))
  pl.run_scoped(body3, plgpu.ACC((64, 128)))
""") == []


def test_a_generators_call_does_not_run_its_body() -> None:
    assert severities("""
def gen():
  raise ValueError("never runs: a generator's call only makes the generator")
  yield 1

def kernel(a_ref):
  def body(acc_ref):
    gen()
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.ERROR)]


# -- block dimensions of a pipeline's BlockSpec ---------------------------------------------------

def test_element_and_blocked_block_dims_give_their_block_size() -> None:
    """`pl.Element(64)` / `pl.Blocked(64)` in a BlockSpec's block shape: the pipeline's SMEM
    block takes the block size (pipeline.py `_get_block_size`), as an int dimension would."""
    from wgmma_lsp.ide.hover import hover

    source = HEADER + """
def kernel(a_gmem, b_gmem, o_gmem):
  spec = functools.partial(plgpu.BlockSpec, delay_release=0)
  def step(indices, a_smem, b_smem):
    x = a_smem[...]
  plgpu.emit_pipeline(step, grid=(4,), in_specs=[spec((pl.Element(64), 32), lambda k: (0, k)),
                                                 spec((32, pl.Blocked(128)), lambda k: (k, 0))])(a_gmem, b_gmem)

def f(a, b):
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32))(a, b)

# wgmma-lsp: trace f(bf16[64,128], bf16[128,128])
"""
    analysis = analyze(source)
    line = source.splitlines().index("  def step(indices, a_smem, b_smem):")
    assert "Ref<smem>{bfloat16[64,32]}" in hover(analysis, line, 22).markdown
    assert "Ref<smem>{bfloat16[32,128]}" in hover(analysis, line, 30).markdown


# -- RefUnion and custom_vmap --------------------------------------------------------------------

_UNION = ("plgpu.RefUnion((plgpu.SMEM((128, 64), jnp.bfloat16), plgpu.SMEM((2, 128, 64), jnp.bfloat16)), "
          "(plgpu.SMEM((2, 1, 64, 64), jnp.bfloat16), plgpu.SMEM((2, 64), jnp.float32), "
          "plgpu.SMEM((3, 5), jnp.float32)))")


def test_ref_union_size_is_jaxs() -> None:
    """The union's buffer is as large as JAX makes it (its largest group, members aligned)."""
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    ours = interpreted(HEADER + f"u = {_UNION}\n")["u"]
    real = eval(_UNION, {"plgpu": plgpu, "jnp": jnp})  # noqa: S307 - the test's own expression
    assert getattr(ours, "num_bytes", None) == real.shape[0]


def test_a_ref_union_unpacks_into_its_groups_refs() -> None:
    from wgmma_lsp.ide.hover import hover

    source = HEADER + f"""
def kernel(x_gmem, o_gmem, union):
  (q_smem, k_smem), (o_smem, *rest) = union

def f(x):
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32),
                      scratch_types=[{_UNION}])(x)

# wgmma-lsp: trace f(bf16[64,128])
"""
    analysis = analyze(source)
    line = source.splitlines().index("  (q_smem, k_smem), (o_smem, *rest) = union")
    assert "Ref<smem>{bfloat16[2,128,64]}" in hover(analysis, line, 11).markdown
    assert "Ref<smem>{bfloat16[2,1,64,64]}" in hover(analysis, line, 22).markdown


def test_custom_vmap_functions_run_when_called() -> None:
    """`@jax.custom_batching.custom_vmap` (tokamax's persistent kernels): calling it runs the
    function; `@f.def_vmap` registers a rule and returns it."""
    assert severities("""
import jax.custom_batching

def kernel(a_ref):
  @jax.custom_batching.custom_vmap
  def wrapper(x):
    def body(acc_ref):
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    pl.run_scoped(body, plgpu.ACC((64, 128)))
    return x

  @wrapper.def_vmap
  def rule(axis_size, in_batched, x):
    return x, in_batched[0]

  wrapper(jnp.zeros((8,), jnp.float32))
""") == [("WG001", Severity.ERROR)]


def test_numpy_float_constants_are_pythons() -> None:
    agree("import jax.numpy as jnp\nimport numpy as np\n"
          "A = (jnp.pi, np.e, -jnp.inf, np.inf > 1e308, jnp.euler_gamma)\n", "A")


@pytest.mark.parametrize("dtype", ["int32", "int8", "bool_", "uint8", "float32", "bfloat16"])
@pytest.mark.parametrize("shape, kw", [((4,), ""), ((4,), ", include_initial=True"),
                                       ((4, 3), ", axis=1, include_initial=True"),
                                       ((4, 3), ", axis=-2")])
def test_cumulative_sum_as_jax(dtype: str, shape: tuple, kw: str) -> None:
    import jax
    import jax.numpy as jnp

    ours = interpreted(f"import jax.numpy as jnp\n"
                       f"y = jnp.cumulative_sum(jnp.zeros({shape}, jnp.{dtype}){kw})\n")["y"]
    real = jax.eval_shape(eval(f"lambda x: jnp.cumulative_sum(x{kw})", {"jnp": jnp}),  # noqa: S307
                          jax.ShapeDtypeStruct(shape, getattr(jnp, dtype)))
    assert ours.describe() == f"{real.dtype}[{','.join(map(str, real.shape))}]"


# -- lax.cond / lax.switch: every branch traced, results joined ----------------------------------

_COND = """
import jax
import jax.numpy as jnp
from jax import lax

def f(p, i, x):
    a = lax.cond(p, lambda: jnp.where(x > 0, x, 0.0), lambda: x * 2)
    b = lax.switch(i, [lambda y: y + 1, lambda y: jnp.abs(y), lambda y: y.astype(jnp.float32)], x)
    c = lax.cond(p, lambda y: (y, y.sum()), lambda y: (y * 0, y.max()), x)
    return a, b, c
"""


def test_cond_and_switch_results_are_every_branchs() -> None:
    """With an unknown predicate and index every branch runs; the result is their common
    value, which JAX requires to be one type: as jax.eval_shape says."""
    import jax
    import jax.numpy as jnp

    ours = interpreted(_COND + "R = f(jnp.zeros((), jnp.bool_), jnp.zeros((), jnp.int32), "
                               "jnp.zeros((4, 8), jnp.float32))\n")["R"]
    real = jax.eval_shape(run_cpython(_COND)["f"], jax.ShapeDtypeStruct((), jnp.bool_),
                          jax.ShapeDtypeStruct((), jnp.int32), jax.ShapeDtypeStruct((4, 8), jnp.float32))
    flat = jax.tree.leaves(real)
    assert isinstance(ours, TupleVal)
    leaves = [ours.items[0], ours.items[1], *ours.items[2].items]  # type: ignore[union-attr]
    assert [v.describe() for v in leaves] == [f"{r.dtype}[{','.join(map(str, r.shape))}]" for r in flat]


def test_a_finding_in_either_cond_branch_is_certain() -> None:
    """JAX traces both branches of `lax.cond` whatever the predicate: an error in one is an
    error (not 'on some paths')."""
    assert severities("""
def kernel(a_ref, b_ref):
  def body(acc_ref):
    def zero():
      acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    def one():
      pass
    jax.lax.cond(a_ref[0] > 0, zero, one)
  pl.run_scoped(body, plgpu.ACC((64, 128)))
""") == [("WG001", Severity.ERROR)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_of_a_finfo_value_is_numpys(dtype: str) -> None:
    agree(f"import jax.numpy as jnp\nA = (float(jnp.finfo(jnp.{dtype}).tiny), "
          f"float(jnp.finfo(jnp.{dtype}).max), float(jnp.finfo(jnp.{dtype}).eps), "
          f"float(jnp.finfo(jnp.{dtype}).min))\n", "A")


@pytest.mark.parametrize("expr", ["x[s]", "x[s, 1:]", "x[2, s]", "x[:, s]", "x[None, s]",
                                  "y[s]", "jnp.searchsorted(y, s, 'right')",
                                  "pl.cdiv(s, 8)", "pl.cdiv(y * 3, 8)"])
def test_integer_array_indexing_and_searchsorted_as_jax(expr: str) -> None:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    ours = interpreted(HEADER + "x = jnp.zeros((6, 5), jnp.bfloat16)\ny = jnp.zeros((6,), jnp.int32)\n"
                       f"s = jnp.zeros((3, 2), jnp.int32)\nr = {expr}\n")["r"]
    real = jax.eval_shape(eval(f"lambda x, y, s: {expr}", {"jnp": jnp, "pl": pl}),  # noqa: S307
                          jax.ShapeDtypeStruct((6, 5), jnp.bfloat16), jax.ShapeDtypeStruct((6,), jnp.int32),
                          jax.ShapeDtypeStruct((3, 2), jnp.int32))
    assert ours.describe() == f"{real.dtype}[{','.join(map(str, real.shape))}]"


def test_an_nd_loop_carry_is_traced() -> None:
    """`plgpu.nd_loop(..., init_carry=0)`: the body's carry is a traced weak int32 (the loop is a
    lax.fori_loop in helpers.py), not the Python 0."""
    from wgmma_lsp.ide.hover import hover

    source = HEADER + """
def kernel(x_gmem, o_gmem):
  @plgpu.nd_loop((4, 8), collective_axes="sm", init_carry=0)
  def body(loop_info, carry):
    step = carry + 1
    return step

def f(x):
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 128), jnp.float32),
                      grid=(2,), grid_names=("sm",))(x)

# wgmma-lsp: trace f(bf16[64,128])
"""
    analysis = analyze(source)
    line = source.splitlines().index("    step = carry + 1")
    assert "int32[]" in hover(analysis, line, 11).markdown


def test_decorators_of_any_form_and_wrappers_that_choose_the_body() -> None:
    """User decorators that wrap (functools.wraps) and return, a call that returns a decorator,
    a decorator that registers and returns, a wrapper that takes the body chosen from a flag,
    closures with defaults captured in a loop, functools.partial of a decorated function."""
    agree('''import functools

def twice(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return 2 * f(*args, **kwargs)
    return wrapper

def scaled(k):
    def deco(f):
        def inner(x):
            return k * f(x)
        return inner
    return deco

def register(table):
    def deco(f):
        table[f.__name__ if False else "f"] = f
        return f
    return deco

TABLE = {}

@twice
def a(x, y=1):
    return x + y

@scaled(3)
@twice
def b(x):
    return x

@register(TABLE)
def c(x):
    return x * 10

def choose(persistent):
    def body1(x): return x + 100
    def body2(x): return x + 200
    return body1 if persistent else body2

def run_with(body_fn):
    def deco(f):
        return lambda x: f(body_fn(x))
    return deco

@run_with(choose(True))
def d(v):
    return v * 2

fs = [lambda x, i=i: x + i for i in range(3)]
A = a(3, y=4)
B = b(5)
C = c(2)
D = d(1)
E = [f(10) for f in fs]
G = functools.partial(a, 1)(y=2)
H = TABLE["f"](3)
''', "A", "B", "C", "D", "E", "G", "H")


def test_unpacking_the_shape_of_an_array_of_unknown_rank_names_its_sizes() -> None:
    """`x = lax.collapse(x, 0, -1); m, k = x.shape` with x a parameter nothing is known of:
    the unpacking says x has rank 2 (any other rank raises there) and names its sizes."""
    from wgmma_lsp.ide.hover import hover

    source = HEADER + """
def f(x):
    x = jax.lax.collapse(x, 0, -1)
    m, k = x.shape
    return x
"""
    analysis = analyze(source)
    line = source.splitlines().index("    return x")
    assert "x.dtype[m, k]" in hover(analysis, line, 11).markdown


def test_a_container_never_equals_a_scalar() -> None:
    """`precision != -1` (tokamax's vjp heuristics, where `precision` is a tuple): a tuple, list
    or dict is never equal to a number, string or None."""
    agree("""
precision = ("a", "b")
ne = precision != -1
eq = [1] == 1
none = {} == None  # noqa: E711
picked = precision[0] if precision is not None and precision != -1 else None
""", "ne", "eq", "none", "picked")

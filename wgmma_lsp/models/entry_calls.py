"""The calls that run a kernel with concrete arguments, and the values they are built from.

- JAX's ways to trace a function: `jax.make_jaxpr(f)(...)`, `jax.jit(f)(...)`,
  `jax.jit(f).trace(...)` / `.lower(...)` / `.eval_shape(...)`, `jax.eval_shape(f, ...)`,
  `jax.linearize(f, ...)`, `jax.shard_map(f, ...)(...)` (`jax.vjp`, `jax.grad`: models/autodiff.py),
  and Mosaic GPU's `profiler.measure(f)(...)`. Each calls `f` the way JAX does: example
  `ShapeDtypeStruct`s and Python scalars become traced arrays (unless static).
- Example arguments: `jax.random.uniform(key, shape, dtype)` and friends, `np.zeros/ones/empty/
  full/arange`.
- Drivers: `absl.app.run(main)` calls `main(argv)`; `itertools.product` over known values is a
  configuration sweep (`ProductVal`).
"""

from __future__ import annotations

from contextvars import ContextVar

from wgmma_lsp.interpret import axis_env
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ArrayVal,
    ClassVal,
    Const,
    FuncVal,
    ProductVal,
    ShapeDtypeVal,
    SymInt,
    TupleVal,
    Value,
    Wrapped,
    as_int,
    is_unknown,
)
from wgmma_lsp.models.arrays import _shape_arg, as_array, to_dtype
from wgmma_lsp.models.registry import METHODS, model

MAX_PRODUCT = 4096


def _statics(kwargs: dict[str, Value]) -> tuple[set[int], set[str]] | None:
    """`static_argnums` / `static_argnames`; None when they are given but not known."""
    nums: set[int] = set()
    names: set[str] = set()
    for key, v in kwargs.items():
        if key not in ("static_argnums", "static_argnames"):
            continue
        items = v.items if isinstance(v, TupleVal) else (v,)
        for item in items:
            if key == "static_argnums" and as_int(item) is not None:
                nums.add(as_int(item))  # type: ignore[arg-type]
            elif key == "static_argnames" and isinstance(item, Const) and isinstance(item.value, str):
                names.add(item.value)
            else:
                return None
    return nums, names


def traced_value(v: Value) -> Value:
    """An argument as the traced function sees it: example structs and Python numbers become
    arrays; containers are traced leaf by leaf; None and other values pass through."""
    if isinstance(v, ShapeDtypeVal):
        return v.array
    if isinstance(v, TupleVal) and not isinstance(v, ProductVal):
        return TupleVal(tuple(traced_value(i) for i in v.items), v.is_list)
    if isinstance(v, Const) and isinstance(v.value, (int, float, complex)) or isinstance(v, SymInt):
        arr = as_array(v)
        return arr if arr is not None else UNKNOWN
    return v


def trace_call(call: Call, func: Value, args: list[Value], kwargs: dict[str, Value],
               options: dict[str, Value]) -> Value:
    """Call `func` as a JAX transformation traces it."""
    statics = _statics(options)
    if statics is None:
        new_args, new_kwargs = list(args), dict(kwargs)
    else:
        nums, names = statics
        new_args = [a if i in nums else traced_value(a) for i, a in enumerate(args)]
        new_kwargs = {k: v if k in names else traced_value(v) for k, v in kwargs.items()}
    nodes = list(call.arg_nodes) + [None] * (len(new_args) - len(call.arg_nodes))
    inner = Call(call.interp, call.node, new_args, new_kwargs, nodes[:len(new_args)],
                 dict(call.kw_nodes), call.env, call.complete)
    return call.interp.call_value(func, inner)


def _wrap(name: str):
    def make(call: Call) -> Value:
        f = call.get(0, "fun")
        if is_unknown(f):
            return UNKNOWN
        return Wrapped(name, f, {k: v for k, v in call.kwargs.items() if k != "fun"}, call.span)
    return make


for _name in ("jax.make_jaxpr", "jax.shard_map",
              "jax.experimental.shard_map.shard_map", "mgpu.profiler.measure"):
    model(_name)(_wrap(_name))


@model("jax.make_jaxpr()")
def _make_jaxpr_apply(call: Call) -> Value:
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    trace_call(call, wrapped.func, call.args, call.kwargs, wrapped.kwargs)
    return UNKNOWN  # a ClosedJaxpr


@model("jax.shard_map()", "jax.experimental.shard_map.shard_map()")
def _shard_map_apply(call: Call) -> Value:
    """Inside shard_map each argument is one shard: the dtype stays, a dimension split over
    mesh axes is divided by their sizes (models/meshes.py). The mesh is `mesh=` or the one
    `jax.set_mesh` set; `in_specs` defaults to each argument's own sharding (`Infer`)."""
    from wgmma_lsp.models import meshes

    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    axes = meshes.mesh_axes(meshes.current_mesh(call, wrapped.kwargs.get("mesh")))

    def shard(v: Value, spec: Value | None) -> Value:
        if spec is None:  # in_specs=Infer: each leaf's own sharding
            if isinstance(v, TupleVal) and not isinstance(v, ProductVal):
                return TupleVal(tuple(shard(i, None) for i in v.items), v.is_list)
            spec = meshes.inferred_spec(v)
        v = traced_value(v)
        if isinstance(v, ArrayVal):
            return ArrayVal(meshes.shard_shape(v.shape, spec, axes), v.dtype)
        if isinstance(v, TupleVal):
            specs = spec.items if isinstance(spec, TupleVal) and len(spec.items) == len(v.items) \
                else (spec if meshes.is_partition_spec(spec) else UNKNOWN,) * len(v.items)
            return TupleVal(tuple(shard(i, s) for i, s in zip(v.items, specs)), v.is_list)
        return v
    if "in_specs" not in wrapped.kwargs:
        specs: list[Value | None] = [None] * len(call.args)
    else:
        in_specs = wrapped.kwargs["in_specs"]
        # `in_specs` is a pytree prefix of the arguments: one PartitionSpec for all, or one per argument
        specs = list(in_specs.items) if isinstance(in_specs, TupleVal) and len(in_specs.items) == len(call.args) \
            else [in_specs if meshes.is_partition_spec(in_specs) else UNKNOWN] * len(call.args)
    args = [shard(a, s) for a, s in zip(call.args, specs)]
    token = _MESH_AXES.set({**_MESH_AXES.get(), **axes})
    try:
        # The body runs under the mesh's axis names (the mesh's own, all of them: `axes` is
        # empty when the mesh is not known, and so are the names then).
        with axis_env.extended(tuple(axes) if axes else None):
            call.interp.call_value(wrapped.func, Call(call.interp, call.node, args, {}, [None] * len(args), {},
                                                      call.env, call.complete))
    finally:
        _MESH_AXES.reset(token)
    return UNKNOWN


#: The mesh axes (name -> size) of the shard_map bodies being run, for `lax.axis_size`.
_MESH_AXES: ContextVar[dict[str, Dim]] = ContextVar("mesh_axes", default={})


@model("lax.axis_size")
def _axis_size(call: Call) -> Value:
    """`lax.axis_size(name)` inside a shard_map body over a known mesh: the axis' size (a tuple
    of names: the product)."""
    from wgmma_lsp.models.axis_names import axis_size_fails
    from wgmma_lsp.models.meshes import axis_size

    if axis_size_fails(call):
        return UNKNOWN
    return axis_size(call.get(0, "axis_name"), _MESH_AXES.get())


@model("jax.sharding.PartitionSpec", "jax.P")
def _partition_spec(call: Call) -> Value:
    """`PartitionSpec(*entries)`: kept (its entries) for shard_map's local shapes."""
    if call.kwargs:
        return UNKNOWN
    return Wrapped("jax.sharding.PartitionSpec", UNKNOWN, {"entries": TupleVal(tuple(call.args))})


@model("mgpu.profiler.measure()")
def _measure_apply(call: Call) -> Value:
    """`profiler.measure(f, ...)(*args)` runs `f(*args)` under jit: (result, runtimes)."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    out = trace_call(call, wrapped.func, call.args, call.kwargs, {})
    return TupleVal((out, UNKNOWN))


@model("jax.eval_shape")
def _eval_shape(call: Call) -> Value:
    f = call.get(0, "fun")
    if is_unknown(f):
        return UNKNOWN
    out = trace_call(call, f, call.args[1:], {k: v for k, v in call.kwargs.items() if k != "fun"}, {})
    return _as_struct(out)


def _as_struct(v: Value) -> Value:
    """What `jax.eval_shape` gives for a traced result: each array leaf a `ShapeDtypeStruct`,
    the tree around them kept (`None` is an empty subtree: it stays `None`)."""
    if isinstance(v, ArrayVal):
        return ShapeDtypeVal(v)
    if isinstance(v, ShapeDtypeVal):
        return v
    if isinstance(v, Const) and v.value is None:
        return v
    if isinstance(v, TupleVal) and not v.spoiled:
        return TupleVal(tuple(_as_struct(i) for i in v.items), v.is_list)
    return UNKNOWN


@model("jax.linearize")
def _linearize(call: Call) -> Value:
    f = call.get(0, "fun")
    if is_unknown(f):
        return UNKNOWN
    out = trace_call(call, f, call.args[1:], {}, {})
    return TupleVal((out, UNKNOWN))


@model("jax.jvp")
def _jvp(call: Call) -> Value:
    f, primals = call.get(0, "fun"), call.get(1, "primals")
    if is_unknown(f) or not isinstance(primals, TupleVal):
        return UNKNOWN
    out = trace_call(call, f, list(primals.items), {}, {})
    return TupleVal((out, UNKNOWN))


def _jit_method(obj: Value, call: Call) -> Value:
    """`jax.jit(f).trace(...)` / `.lower(...)` / `.eval_shape(...)`: traced like a call."""
    assert isinstance(obj, Wrapped)
    out = trace_call(call, obj.func, call.args, call.kwargs, obj.kwargs)
    return UNKNOWN if not isinstance(out, ArrayVal) else ShapeDtypeVal(out)


for _m in ("trace", "lower", "eval_shape"):
    METHODS[f"wrapped:jax.jit.{_m}"] = _jit_method


# -- example arguments ----------------------------------------------------------------------
def _random(shape_at: int, dtype_at: int, default: str | None):
    def make(call: Call) -> Value:
        from wgmma_lsp.interpret.dtypes import DType

        shape = _shape_arg(call.get(shape_at, "shape", TupleVal(())))
        dt = call.get(dtype_at, "dtype", Const(None))
        if isinstance(dt, Const) and dt.value is None:
            dtype = DType(default) if default else None
        else:
            dtype = to_dtype(dt)
        return ArrayVal(shape, dtype, jax=True)
    return make


for _name in ("uniform", "normal", "truncated_normal", "exponential", "gumbel", "laplace",
              "logistic", "cauchy"):
    model(f"jax.random.{_name}")(_random(1, 2, "float32"))
model("jax.random.randint")(_random(1, 4, "int32"))
model("jax.random.bernoulli")(_random(2, 99, "bool"))


def _float_dtype(call: Call, at: int):
    from wgmma_lsp.interpret.dtypes import DType

    dt = call.get(at, "dtype", Const(None))
    return DType("float32") if isinstance(dt, Const) and dt.value is None else to_dtype(dt)


@model("jax.random.dirichlet")
def _dirichlet(call: Call) -> Value:
    """`dirichlet(key, alpha, shape=None, dtype=None)`: `shape + alpha.shape[-1:]`, where
    `shape` defaults to `alpha.shape[:-1]` (jax/_src/random.py)."""
    alpha = as_array(call.get(1, "alpha"))
    if alpha is None or not alpha.shape:
        return UNKNOWN
    given = call.get(2, "shape", Const(None))
    batch = alpha.shape[:-1] if isinstance(given, Const) and given.value is None else _shape_arg(given)
    return ArrayVal(None if batch is None else (*batch, alpha.shape[-1]), _float_dtype(call, 3), jax=True)


@model("jax.random.multinomial")
def _multinomial(call: Call) -> Value:
    """`multinomial(key, n, p, *, shape=None, dtype=None)`: counts of `p`'s shape (or `shape`),
    as floats by default (jax/_src/random.py)."""
    p = as_array(call.get(2, "p"))
    given = call.get(99, "shape", Const(None))
    shape = (p.shape if p is not None else None) if isinstance(given, Const) and given.value is None \
        else _shape_arg(given)
    return ArrayVal(shape, _float_dtype(call, 99), jax=True)


@model("np.zeros", "np.ones", "np.empty")
def _np_zeros(call: Call) -> Value:
    dt = call.get(1, "dtype", Const(None))
    # numpy's default is float64, which JAX reads as float32 unless x64 is on: unknown here.
    dtype = None if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(_shape_arg(call.get(0, "shape")), dtype)


@model("np.full")
def _np_full(call: Call) -> Value:
    dt = call.get(2, "dtype", Const(None))
    dtype = None if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return ArrayVal(_shape_arg(call.get(0, "shape")), dtype)


# -- drivers --------------------------------------------------------------------------------
@model("absl.app.run")
def _app_run(call: Call) -> Value:
    """absl's `app.run(main)` calls `main(argv)`."""
    main = call.get(0, "main")
    if isinstance(main, FuncVal):
        call.interp.call_value(main, Call(call.interp, call.node, [UNKNOWN], {}, [None], {},
                                          call.env))
    return UNKNOWN


def enum_members(cls: ClassVal) -> list[Value] | None:
    """The members of an enum class defined in the file (its constant class attributes)."""
    import ast

    bases = [ast.unparse(b) for b in cls.node.bases]
    if not any(b.endswith("Enum") for b in bases):
        return None
    members: list[Value] = []
    for stmt in cls.node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            v = cls.methods.get(stmt.targets[0].id)
            if isinstance(v, Const):
                members.append(v)
    return members or None


@model("itertools.product")
def _product(call: Call) -> Value:
    import itertools

    repeat = as_int(call.kwargs.get("repeat", Const(1)))
    if repeat is None or call.kwargs.keys() - {"repeat"} or not call.complete:
        return UNKNOWN
    axes: list[list[Value]] = []
    for a in call.args:
        items = call.interp.iter_items(a)
        if items is None and isinstance(a, ClassVal):
            items = enum_members(a)
        if items is None:
            return UNKNOWN
        axes.append(items)
    axes = axes * repeat
    total = 1
    for a in axes:
        total *= len(a)
    if total > MAX_PRODUCT:
        return UNKNOWN
    return ProductVal(tuple(TupleVal(c) for c in itertools.product(*axes)), False,
                      tuple(len(a) for a in axes))

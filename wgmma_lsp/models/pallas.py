"""Pallas and Mosaic GPU structure: allocations, scopes, kernels, loops and specs.

Mirrors `jax._src.pallas.primitives` (run_scoped), `jax._src.state.discharge` (run_state),
`jax._src.pallas.pallas_call`, and `jax._src.pallas.mosaic_gpu.core` (kernel, ACC, SMEM, ...).
"""

from __future__ import annotations


from wgmma_lsp.interpret.jax_source import pallas_call_lowers_mosaic_gpu
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret import axis_env, followon, kernel_reach
from wgmma_lsp.interpret.kernel_state import KernelState
from wgmma_lsp.interpret.values import (
    UNKNOWN, AllocSpec, ApiVal, ArrayVal, BlockSpecVal, Const, DSliceVal, FuncVal, RefVal,
    ShapeDtypeVal, TransformVal, TupleVal, Value, Wrapped, as_dim, as_int, as_shape, is_unknown, DictVal,
    PartialVal, join, tree_leaves,
)
from wgmma_lsp.models.arrays import FLOAT32, INT32, as_array, to_dtype
from wgmma_lsp.models.block_refs import block_ref as _block_ref
from wgmma_lsp.models.registry import CONSTANTS, METHODS, model
from wgmma_lsp.models import (
    axis_names, cluster_axes, cond_pred, implicit_copies, interpret_mode, smem_budget, tmem_budget,
)
from wgmma_lsp.models.scopes_lowering import check_run_scoped_lowering

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable

_SPACES = {"plgpu.SMEM": "smem", "plgpu.GMEM": "gmem", "plgpu.TMEM": "tmem", "plgpu.REGS": "regs",
           "plgpu.MemorySpace.SMEM": "smem", "plgpu.MemorySpace.GMEM": "gmem",
           "plgpu.MemorySpace.TMEM": "tmem", "plgpu.MemorySpace.REGS": "regs",
           "pl.ANY": "any"}


# -- allocations ----------------------------------------------------------------------------
@model("plgpu.ACC")
def _acc(call: Call) -> Value:
    """`plgpu.ACC(shape, dtype=jnp.float32)`: a WGMMA accumulator (core.WGMMAAccumulatorRef)."""
    shape = as_shape(call.get(0, "shape"))
    dt = call.get(1, "dtype", Const(None))
    dtype = FLOAT32 if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
    return AllocSpec("acc", ArrayVal(shape, dtype), span=call.span)


@model("plgpu.ACC.init")
def _acc_init(call: Call) -> Value:
    """`plgpu.ACC.init(x)`: an accumulator initialised with x (only valid in `pl.run_state`)."""
    x = as_array(call.get(0, "array"))
    inner = x if x is not None else ArrayVal(None, None)
    return AllocSpec("acc", ArrayVal(inner.shape, inner.dtype), init=call.get(0, "array"), span=call.span,
                     init_span=call.span_of(0, "array"))


def _mem_alloc(kind: str):
    """`plgpu.SMEM/GMEM/TMEM(shape, dtype, *, transforms, packed, collective, layout)`
    (core.MemorySpace.__call__); the allocation's own checks are in models/blackwell.py."""
    def fn(call: Call) -> Value:
        from wgmma_lsp.models.blackwell import check_allocation

        shape = as_shape(call.get(0, "shape"))
        dtype = to_dtype(call.get(1, "dtype"))
        transforms = _transforms(call.get(99, "transforms", Const(())))
        if not check_allocation(call, kind, shape, dtype):
            return UNKNOWN  # JAX raises here
        return AllocSpec(kind, ArrayVal(shape, dtype), span=call.span, transforms=transforms,
                         attrs=_bool_attrs(call, ("collective", "packed", "layout") if kind == "tmem" else ()))
    return fn


for _name, _kind in _SPACES.items():
    if _kind in ("smem", "gmem", "tmem"):
        model(_name)(_mem_alloc(_kind))
    CONSTANTS.setdefault(_name, ApiVal(_name))


@model("plgpu.TryClusterCancelResult")
def _try_cluster_cancel_result(call: Call) -> Value:
    """`TryClusterCancelResult(num_buffers=None)` (core.py): `SMEM((16,), jnp.int8)`, or
    `SMEM((num_buffers, 16), jnp.int8)`."""
    from wgmma_lsp.interpret.dtypes import DType

    n = call.get(0, "num_buffers", Const(None))
    if not call.complete or len(call.args) + len(call.kwargs) > 1:
        return UNKNOWN
    if isinstance(n, Const) and n.value is None:
        shape: tuple | None = (16,)
    else:
        d = as_dim(n)
        shape = (d, 16) if d is not None else None
    return AllocSpec("smem", ArrayVal(shape, DType("int8")), span=call.span)


def _bool_attrs(call: Call, names: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """Boolean keyword arguments of an allocation (absent: False) where they are known."""
    out = []
    for name in names:
        v = call.kwargs.get(name, Const(False) if call.complete else None)
        if isinstance(v, Const) and (v.value is None or isinstance(v.value, bool)):
            out.append((name, bool(v.value)))
    return tuple(out)


def _barrier(type_name: str):
    def fn(call: Call) -> Value:
        """`core.Barrier/ClusterBarrier(num_arrivals=1, num_barriers=..., ...)`: get_ref_aval is
        `AbstractRef(ShapedArray(num_barriers, BarrierType), SMEM)`; `num_barriers` is an int
        (shape (n,)) or a sequence (the shape itself). Its default is the installed JAX's
        (1 in 0.10; () in 0.12: a single barrier, a ref of empty shape)."""
        from wgmma_lsp.interpret import jax_facts
        from wgmma_lsp.interpret.dtypes import DType
        from wgmma_lsp.models.constructs import barrier_ok

        if not barrier_ok(call):
            return UNKNOWN  # JAX raises here
        default = jax_facts.current().barrier_default_num_barriers
        n = call.kwargs.get("num_barriers")
        if n is None:
            n = TupleVal(tuple(Const(d) for d in default)) if default is not None else UNKNOWN
        shape = as_shape(n) if call.complete and not is_unknown(n) else None
        arrivals = as_int(call.get(0 if type_name == "barrier" else 2, "num_arrivals", Const(1))) if call.complete else None
        axes = axis_names.names_of(call.get(0, "collective_axes")) if type_name == "cluster_barrier" else None
        return AllocSpec("barrier", ArrayVal(shape, DType(type_name)), span=call.span,
                         attrs=_bool_attrs(call, ("orders_tensor_core",)), arrivals=arrivals,
                         cluster_axes=axes)
    return fn


model("plgpu.Barrier")(_barrier("barrier"))
model("plgpu.ClusterBarrier")(_barrier("cluster_barrier"))


def _semaphore_alloc() -> AllocSpec:
    """`plgpu.SemaphoreType.REGULAR` as a scratch type (core.SemaphoreType.get_array_aval):
    `MemoryRef(ShapedArray((), Semaphore()), GMEM)`."""
    from wgmma_lsp.interpret.dtypes import DType

    return AllocSpec("gmem", ArrayVal((), DType("semaphore")))


def _allocate(call: Call, spec: Value, span, desc: str) -> Value:
    """The ref `run_scoped` hands to its body for one allocation (pytrees of them too)."""
    if isinstance(spec, AllocSpec) and spec.transforms and not desc.startswith("pallas_call"):
        from wgmma_lsp.models.transforms import transforms_apply

        if not transforms_apply(call, spec):
            return UNKNOWN  # JAX raises here
    if isinstance(spec, AllocSpec):
        return spec.to_ref(spec.span or span, desc)
    if isinstance(spec, TupleVal):
        return TupleVal(tuple(_allocate(call, s, span, desc) for s in spec.items), spec.is_list)
    if isinstance(spec, DictVal):  # a dict of allocations (a pipeline's `get_allocations`)
        return DictVal(tuple((k, _allocate(call, s, span, desc)) for k, s in spec.items))
    from wgmma_lsp.models.ref_union import RefUnionSpec

    if isinstance(spec, RefUnionSpec):  # the union unpacks into its groups' refs
        return _allocate(call, spec.groups, span, desc)
    if isinstance(spec, Const) and spec.value is None:
        return spec  # an empty pytree: the body gets None
    if isinstance(spec, ApiVal) and spec.name == "plgpu.SemaphoreType.REGULAR":
        return _semaphore_alloc().to_ref(span, desc)
    return UNKNOWN


@model("pl.run_scoped")
def _run_scoped(call: Call) -> Value:
    """`pl.run_scoped(f, *types, collective_axes=None, **kw_types)` (pallas/primitives.py)."""
    from wgmma_lsp.rules import accumulator_init_scope

    interp = call.interp
    if not call.args:
        return UNKNOWN
    body = call.args[0]
    refs: list[Value] = []
    kwrefs: dict[str, Value] = {}
    positions = [(i, None) for i in range(1, len(call.args))] + \
        [(None, k) for k in call.kwargs if k != "collective_axes"]
    allocations = []
    for i, k in positions:
        spec = call.args[i] if i is not None else call.kwargs[k]  # type: ignore[index]
        node_span = call.span_of(i if i is not None else -1, k)
        if isinstance(spec, AllocSpec) and spec.kind == "acc" and spec.init is not None:
            interp.report(accumulator_init_scope.RULE, accumulator_init_scope.MESSAGE,
                          spec.span or node_span, call.line,
                          data={"init_span": spec.span, "run_scoped_span": call.span})
            return UNKNOWN  # JAX raises here: the body is never traced
        allocations.append((spec, node_span))
    if interp.kernel.lowering in ("lane", "warpgroup"):
        cluster_axes.check_cluster_barriers(call, allocations)
        check_run_scoped_lowering(call, allocations, call.kwargs.get("collective_axes", Const(None)))
    for i, k in positions:
        spec = call.args[i] if i is not None else call.kwargs[k]  # type: ignore[index]
        node_span = call.span_of(i if i is not None else -1, k)
        name = k or f"argument {i}"
        ref = _allocate(call, spec, node_span, f"run_scoped ({name})")
        if i is not None:
            refs.append(ref)
        else:
            kwrefs[k] = ref  # type: ignore[index]
    arg_nodes = [None] * len(refs)
    scope = smem_budget.enter(interp, [spec for spec, _ in allocations])
    cols = tmem_budget.scope_enter(interp, [spec for spec, _ in allocations])
    try:
        return interp.call_value(body, Call(interp, call.node, refs, kwrefs, arg_nodes, {}, call.env,
                                            call.complete))
    finally:
        smem_budget.leave(interp, scope)
        tmem_budget.scope_exit(interp, cols)


@model("pl.run_state")
def _run_state(call: Call) -> Value:
    return Wrapped("pl.run_state", call.get(0), {}, call.span)


def _uninitialized_accumulator(call: Call, init: Value) -> bool:
    """`run_state`'s abstract eval raises a bare NotImplementedError for `plgpu.ACC(shape)`
    (an accumulator type without a value) among its initial values."""
    from wgmma_lsp.rules import run_state_uninitialized_acc

    specs = init.items if isinstance(init, TupleVal) else (init,)
    for spec in specs:
        if isinstance(spec, AllocSpec) and spec.kind == "acc" and spec.init is None:
            call.interp.report(
                run_state_uninitialized_acc.RULE,
                "pl.run_state needs initial values, but plgpu.ACC(...) is an accumulator type with no "
                "value: pass plgpu.ACC.init(x) (JAX: a bare NotImplementedError from run_state's "
                "abstract eval)", spec.span or call.span, call.line,
                data={"acc_span": spec.span})
            return True
    return False


@model("pl.run_state()")
def _run_state_apply(call: Call) -> Value:
    """`pl.run_state(f)(init)`: f gets refs initialised from init; returns their final values."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    interp = call.interp

    def to_ref(v: Value, span) -> Value:
        if isinstance(v, AllocSpec) and v.kind == "acc":
            return RefVal(v.inner, "regs", "acc", origin=v.span or span, origin_desc="run_state (ACC.init)")
        if isinstance(v, ArrayVal):
            return RefVal(v, None, "plain", origin=span, origin_desc="run_state")
        if isinstance(v, TupleVal):
            return TupleVal(tuple(to_ref(x, span) for x in v.items), v.is_list)
        return UNKNOWN

    def final(v: Value) -> Value:
        if isinstance(v, AllocSpec):
            return v.inner
        if isinstance(v, TupleVal):
            return TupleVal(tuple(final(x) for x in v.items), v.is_list)
        return v if isinstance(v, ArrayVal) else UNKNOWN

    init = call.get(0)
    if _uninitialized_accumulator(call, init):
        return UNKNOWN  # JAX raises here
    if interp.kernel.lowering == "lane":
        _check_init_layouts(call, init)
    refs = to_ref(init, call.span_of(0))
    interp.call_value(wrapped.func, Call(interp, call.node, [refs], {}, [None], {}, call.env))
    return final(init)


def _check_init_layouts(call: Call, init: Value) -> None:
    """Lane lowering of run_state: `WGMMAAccumulator.from_registers` for each `ACC.init(x)`."""
    from wgmma_lsp.models.array_constructors import SPLAT
    from wgmma_lsp.models.user_spelling import module_alias
    from wgmma_lsp.rules import accumulator_layout

    items = init.items if isinstance(init, TupleVal) else (init,)
    for v in items:
        if isinstance(v, AllocSpec) and v.kind == "acc" and isinstance(v.init, ArrayVal) \
                and v.init.layout == SPLAT:
            call.interp.report(accumulator_layout.RULE, accumulator_layout.MESSAGE, v.init_span, call.line,
                               data={"value_span": v.init_span, "plgpu": module_alias(call.interp, "plgpu")})


# -- specs ----------------------------------------------------------------------------------
def _space(v: Value) -> str | None:
    if isinstance(v, ApiVal):
        return _SPACES.get(v.name)
    return None


@model("pl.BlockSpec", "plgpu.BlockSpec")
def _blockspec(call: Call) -> Value:
    bs = call.get(0, "block_shape", Const(None))
    block: tuple[Value, ...] | None
    if isinstance(bs, TupleVal):
        block = bs.items
    elif isinstance(bs, Const) and bs.value is None:
        block = None
    else:
        block = ("?",)  # type: ignore[assignment]
    ms = call.get(99, "memory_space", Const(None))
    space = "default" if isinstance(ms, Const) and ms.value is None else _space(ms)
    delay = call.get(99, "delay_release", Const(0)) if call.complete else UNKNOWN
    axes = call.get(99, "collective_axes", Const(())) if call.complete else UNKNOWN
    collective = (bool(axes.value) if isinstance(axes, Const) else
                  bool(axes.items) if isinstance(axes, TupleVal) else None)
    return BlockSpecVal(block, space, _transforms(call.get(99, "transforms", Const(()))),
                        index_map=call.get(1, "index_map", Const(None)),
                        delay_release=as_int(delay), collective_axes=collective, span=call.span)


def _specs_list(v: Value, n: int) -> list[Value]:
    if isinstance(v, TupleVal):
        items = list(v.items)
        return items + [UNKNOWN] * (n - len(items))
    if isinstance(v, BlockSpecVal):
        return [v] * n
    if isinstance(v, Const) and v.value is None:
        return [Const(None)] * n
    return [UNKNOWN] * n


def _is_type_tree(v: Value) -> bool:
    """A pytree of array types (`jax.ShapeDtypeStruct`s, arrays, `None`s)."""
    if isinstance(v, TupleVal):
        return all(_is_type_tree(x) for x in v.items)
    return isinstance(v, (ShapeDtypeVal, ArrayVal)) or (isinstance(v, Const) and v.value is None)


def _gmem_tree(v: Value, origin, desc: str) -> Value:
    """The GMEM refs a kernel body gets for one pytree argument (None stays None)."""
    if isinstance(v, Const) and v.value is None:
        return v
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_gmem_tree(x, origin, desc) for x in v.items), v.is_list)
    return _block_ref(v, Const(None), "gmem", origin, desc)


def _leaves(v: Value) -> list[Value] | None:
    """The ShapeDtypeStructs/arrays of a tuple/list pytree (`out_shape`); None otherwise."""
    return tree_leaves(v, lambda x: isinstance(x, (ShapeDtypeVal, ArrayVal)), dicts=False)


@model("pl.pallas_call")
def _pallas_call(call: Call) -> Value:
    kwargs = dict(call.kwargs)
    if len(call.args) > 1:
        kwargs["out_shape"] = call.args[1]
    return Wrapped("pl.pallas_call", call.get(0, "kernel"), kwargs, call.span)


@model("pl.pallas_call()")
def _pallas_call_apply(call: Call) -> Value:
    """Calls the kernel with one ref per input, output and scratch buffer (pallas_call.py)."""
    from wgmma_lsp.models.jax_api import check_pallas_call_lowering

    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    kernel_reach.launched(call.interp, wrapped.func)
    kw = wrapped.kwargs
    check_pallas_call_lowering(call, wrapped)
    outs = _leaves(kw.get("out_shape", UNKNOWN))
    if not call.complete or outs is None or "grid_spec" in kw:
        _analyse_kernel_generically(call, wrapped.func)
        return UNKNOWN
    args = list(call.args)
    in_specs = _specs_list(kw.get("in_specs", Const(None)), len(args))
    out_spec_v = kw.get("out_specs", Const(None))
    out_specs = _specs_list(out_spec_v if not isinstance(out_spec_v, BlockSpecVal) or len(outs) == 1
                            else TupleVal((out_spec_v,) * len(outs)), len(outs))
    origin = wrapped.call_span
    refs: list[Value] = []
    for i, (a, s) in enumerate(zip(args, in_specs)):
        refs.append(_block_ref(a, s, "default", origin, f"pallas_call input {i}"))
    for i, (o, s) in enumerate(zip(outs, out_specs)):
        refs.append(_block_ref(o, s, "default", origin, f"pallas_call output {i}"))
    scratch = kw.get("scratch_shapes", TupleVal(()))
    if isinstance(scratch, TupleVal):
        for s in scratch.items:
            refs.append(_allocate(call, s, origin, "pallas_call scratch"))
    elif not (isinstance(scratch, Const) and scratch.value is None):
        _analyse_kernel_generically(call, wrapped.func)
        return _outputs(kw.get("out_shape", UNKNOWN))
    n_buffers = len(args) + len(outs)

    def smem_setup(root: smem_budget.Scope) -> None:
        if isinstance(scratch, TupleVal):
            for s in scratch.items:
                smem_budget.add_allocation(root, s, what="pallas_call scratch")
        smem_budget.pallas_call_pipeline(root, refs, n_buffers, kw.get("compiler_params"), kw.get("grid"))
        implicit_copies.check_input_copies(call.interp, refs, len(args), call.span, call.line)

    # The body is traced under the grid's names, if it has any (`GridMapping.trace_env`).
    with axis_env.extended(axis_names.pallas_call_axes(kw)):
        return _run_kernel(call, wrapped, refs, "pallas_call", smem_setup=smem_setup)


def _run_kernel(call: Call, wrapped: Wrapped, refs: list[Value], what: str,
                run: Callable[[], Value] | None = None,
                smem_setup: Callable[[smem_budget.Scope], None] | None = None) -> Value:
    """Interpret the kernel body with its refs (or `run` it), under the call's lowering
    semantics, counting the shared memory it allocates (`smem_setup` adds what the call itself
    allocates around the body)."""
    interp, kw = call.interp, wrapped.kwargs
    kernel_reach.ran(interp, wrapped.func, refs)
    interp.context.append(f"{what} at line {call.line + 1}")
    semantics = lowering_semantics(kw.get("compiler_params"))
    if what == "pallas_call" and pallas_call_lowers_mosaic_gpu() is False:
        # JAX 0.12: a `pl.pallas_call` is lowered by Triton (no Mosaic GPU params) or not at all
        # (Mosaic GPU params: WG093) — no Mosaic GPU lowering error can be claimed for it
        semantics = None
    mode = interpret_mode.interpreted_here(kw)
    if mode is True:  # run by a CPU interpreter: never lowered, no lowering check applies
        semantics = None
    saved = interp.kernel
    interp.kernel = KernelState(lowering=semantics, span=call.span, wg_axis=_thread_axis(what, kw),
                                cluster_axes=axis_names.lowered_cluster_axes(kw) if what == "plgpu.kernel" else None)
    start = interp.kernel_mark()
    root = smem_budget.start_kernel(interp)
    root.reduction_bytes = smem_budget.reduction_bytes_of(kw.get("compiler_params"))
    if smem_setup is not None:
        smem_setup(root)
    tmem_budget.kernel_enter(interp, refs)
    try:
        if run is not None:
            run()
        else:
            interp.call_value(wrapped.func, Call(interp, call.node, refs, {}, [None] * len(refs), {},
                                                 call.env))
        if interp.kernel.lowering in ("lane", "warpgroup"):
            smem_budget.finish_kernel(interp, root, call.span, call.line)
        tmem_budget.kernel_exit(interp, call.span, call.line)
        if interp.kernel.counted or any(f.rule.installed_stage() == "lower" for f in interp.findings[start[0]:]):
            smem_budget.lowering_found(interp)
        interp.settle_lowering_findings(start)
        if mode is None:  # `interpret=` not known: lowered or not, its errors are possible only
            for f, was, _ in reversed(interp.kernel.counted):  # (those found before: as they were)
                f.certain = was
            for f in interp.findings[start[0]:]:
                if f.rule.installed_stage() == "lower":
                    f.certain = False
        else:  # lowered: a certain lowering error ends the run where JAX raises it
            followon.kernel_lowered(interp)
    finally:
        tmem_budget.kernel_pop(interp)
        interp.context.pop()
        interp.kernel = saved
    return _outputs(kw.get("out_shape", UNKNOWN))


def _thread_axis(what: str, kw: dict[str, Value]) -> str | None:
    """The kernel's thread axis name (lowering's `axis_names.wg`); "?" when unknown."""
    if what == "pallas_call":
        return None
    if "?" in kw:
        return "?"
    name = kw.get("thread_name", Const(None))
    if isinstance(name, Const) and (name.value is None or isinstance(name.value, str)):
        return name.value
    return "?"


def _outputs(v: Value) -> Value:
    if isinstance(v, ShapeDtypeVal):
        return v.array
    if isinstance(v, ArrayVal) or (isinstance(v, Const) and v.value is None):
        return v
    if isinstance(v, TupleVal):
        return TupleVal(tuple(_outputs(x) for x in v.items), v.is_list)
    return UNKNOWN


@model("plgpu.CompilerParams")
def _compiler_params(call: Call) -> Value:
    from wgmma_lsp.models.constructs import compiler_params_ok

    if not compiler_params_ok(call):
        return UNKNOWN  # JAX raises here
    return Wrapped("plgpu.CompilerParams", UNKNOWN, dict(call.kwargs) if call.complete else {"?": UNKNOWN},
                   call.span)


def lowering_semantics(params: Value | None) -> str | None:
    """The lowering semantics a kernel is compiled with: "lane", "warpgroup", or None (unknown)."""
    from wgmma_lsp.interpret.jax_version import default_lowering_semantics

    if params is None or (isinstance(params, Const) and params.value is None):
        return default_lowering_semantics()
    if isinstance(params, Wrapped) and params.api == "plgpu.CompilerParams" and "?" not in params.kwargs:
        sem = params.kwargs.get("lowering_semantics")
        if sem is None:
            return default_lowering_semantics()
        if isinstance(sem, ApiVal) and sem.name.startswith("plgpu.LoweringSemantics."):
            return sem.name.rsplit(".", 1)[1].lower()
    return None


def _analyse_kernel_generically(call: Call, func: Value) -> None:
    if isinstance(func, FuncVal) and id(func.node) not in call.interp.entered:
        call.interp.generic_call(func)


@model("plgpu.kernel")
def _kernel(call: Call) -> Value:
    """`plgpu.kernel(body, *, out_type, scratch_types, compiler_params, **mesh_kwargs)`
    (mosaic_gpu/core.py); 0.10 also takes `out_shape`/`scratch_shapes` (deprecated aliases).
    With a body it builds its `Mesh(**mesh_kwargs)` at once; without, when it decorates one."""
    from wgmma_lsp.models.jax_api import forwarded_keywords_bind

    has_body = bool(call.args) or "body" in call.kwargs
    if has_body and not forwarded_keywords_bind(call, "plgpu.kernel"):
        return UNKNOWN  # TypeError in the installed JAX
    kwargs = dict(call.kwargs)
    if len(call.args) > 1:
        kwargs["out_shape"] = call.args[1]
    if "out_type" in kwargs:
        kwargs["out_shape"] = kwargs["out_type"]
    if "scratch_types" in kwargs:
        kwargs["scratch_shapes"] = kwargs["scratch_types"]
    if not has_body:
        deco = Wrapped("plgpu.kernel_decorator", UNKNOWN, kwargs, call.span)
        call.interp.made_by[id(deco)] = (deco, call)
        return deco
    return Wrapped("plgpu.kernel", call.get(0, "body"), kwargs, call.span)


@model("plgpu.kernel_decorator()")
def _kernel_decorator(call: Call) -> Value:
    from wgmma_lsp.models.jax_api import forwarded_keywords_bind

    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    made = call.interp.made_by.get(id(wrapped))
    if made is not None and made[0] is wrapped \
            and not forwarded_keywords_bind(made[1], "plgpu.kernel", blame_line=call.line):
        return UNKNOWN  # JAX raises where the decorator is applied
    return Wrapped("plgpu.kernel", call.get(0), wrapped.kwargs, wrapped.call_span)


@model("plgpu.kernel()")
def _kernel_apply(call: Call) -> Value:
    """`plgpu.kernel(body, out_shape=...)(*args)`: body(*in_refs, *out_refs, *scratch) in GMEM."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    kernel_reach.launched(call.interp, wrapped.func)
    kw = wrapped.kwargs
    out_type = kw.get("out_shape", UNKNOWN)
    outs = list(out_type.items) if isinstance(out_type, TupleVal) else [out_type]
    if not call.complete or not all(_is_type_tree(o) for o in outs):
        _analyse_kernel_generically(call, wrapped.func)
        return UNKNOWN
    origin = wrapped.call_span
    # Operands and outputs are pytrees, one body argument each (`None` is an empty one).
    refs: list[Value] = [_gmem_tree(a, origin, f"kernel input {i}") for i, a in enumerate(call.args)]
    refs += [_gmem_tree(o, origin, f"kernel output {i}") for i, o in enumerate(outs)]
    scratch = kw.get("scratch_shapes", TupleVal(()))
    if not isinstance(scratch, (TupleVal, DictVal)):
        _analyse_kernel_generically(call, wrapped.func)
        return _outputs(kw.get("out_shape", UNKNOWN))
    # core.kernel: `run_scoped(partial(body, *refs), *scratch_types, collective_axes=thread_name,
    # **scratch_types)` — a sequence of scratch types is positional, a mapping is by keyword.
    positional = list(scratch.items) if isinstance(scratch, TupleVal) else []
    by_name = {k: v for k, v in scratch.items} if isinstance(scratch, DictVal) else {}
    if "thread_name" in kw:  # the scratch is shared by the kernel's threads
        by_name["collective_axes"] = kw["thread_name"]
    scoped = Call(call.interp, call.node, [PartialVal(wrapped.func, tuple(refs), {}), *positional],
                  by_name, [None] * (1 + len(positional)), {}, call.env)
    # The body is traced under `extend_axis_env_nd(mesh.shape)`: the kernel's axis names.
    with axis_env.extended(axis_names.kernel_axes(kw)):
        return _run_kernel(call, wrapped, refs, "plgpu.kernel", lambda: _run_scoped(scoped))


# -- control flow inside kernels -------------------------------------------------------------
@model("pl.when")
def _when(call: Call) -> Value:
    return Wrapped("pl.when", UNKNOWN, {"condition": call.get(0, "condition")}, call.span)


@model("pl.when()")
def _when_apply(call: Call) -> Value:
    """`pl.when(c)(f)` (pallas/helpers.py): for a Python bool, `if c: f()`; for an array, a
    `lax.cond` whose branch JAX traces whatever the value."""
    wrapped = call.wrapped
    cond = wrapped.kwargs.get("condition", UNKNOWN) if isinstance(wrapped, Wrapped) else UNKNOWN
    f = call.get(0)
    if cond_pred.not_scalar(call, cond, wrapped.call_span if isinstance(wrapped, Wrapped) else call.span):
        return UNKNOWN  # JAX raises here (lax.cond, WG118)
    if isinstance(cond, Const) and isinstance(cond.value, bool):
        if cond.value:
            call.interp.call_traced(f, [], call)
        elif isinstance(f, FuncVal):
            call.interp.entered.add(id(f.node))  # never traced: not analysed later either
    elif isinstance(cond, ArrayVal):
        call.interp.call_traced(f, [], call)
    else:
        with call.interp.uncertain():  # a Python value we do not know: maybe not called
            call.interp.call_traced(f, [], call)
    return Const(None)


@model("lax.cond")
def _cond(call: Call) -> Value:
    """`lax.cond(pred, true_fun, false_fun, *operands)`: both branches are traced."""
    if cond_pred.not_scalar(call, call.get(0, "pred"), call.span_of(0, "pred")):
        return UNKNOWN  # JAX raises here (WG118)
    operands = list(call.args[3:])
    results = [call.interp.call_traced(call.get(i), operands, call) for i in (1, 2)]
    return join(results[0], results[1])  # JAX requires both to have one type (else it raises)


@model("lax.switch")
def _switch(call: Call) -> Value:
    """`lax.switch(index, branches, *operands)`: every branch is traced; the result is what
    they all return (joined)."""
    branches = call.get(1, "branches")
    operands = list(call.args[2:])
    if not isinstance(branches, TupleVal) or not branches.items:
        return UNKNOWN
    results = [call.interp.call_traced(b, operands, call) for b in branches.items]
    out = results[0]
    for r in results[1:]:
        out = join(out, r)
    return out


@model("lax.while_loop")
def _while_loop(call: Call) -> Value:
    """`lax.while_loop(cond_fun, body_fun, init_val)`: both functions are traced once."""
    init = call.get(2, "init_val")
    call.interp.call_traced(call.get(0, "cond_fun"), [init], call)
    out = call.interp.call_traced(call.get(1, "body_fun"), [init], call)
    return init if out == init else UNKNOWN


@model("lax.scan")
def _scan(call: Call) -> Value:
    """`lax.scan(f, init, xs)`: f is traced once, with one slice of xs."""
    init, xs = call.get(1, "init"), call.get(2, "xs", Const(None))
    x = ArrayVal(xs.shape[1:], xs.dtype) if isinstance(xs, ArrayVal) and xs.shape else UNKNOWN
    call.interp.call_traced(call.get(0, "f"), [init, x], call)
    return UNKNOWN


# emit_pipeline, emit_pipeline_warp_specialized, nd_loop, pl.loop, core_map: models/pipelines.py


@model("jax.jit", "jax.named_call", "jax.named_scope", "jax.checkpoint", "jax.remat")
def _jit(call: Call) -> Value:
    if call.args and not is_unknown(call.args[0]):
        return Wrapped("jax.jit", call.args[0], dict(call.kwargs), call.span)
    return Wrapped("jax.jit_decorator", UNKNOWN, dict(call.kwargs), call.span)


@model("jax.custom_jvp", "jax.custom_batching.custom_vmap")
def _custom_derivative(call: Call) -> Value:
    """`jax.custom_jvp(f, nondiff_argnums=...)` (jax/_src/custom_derivatives.py): calling it
    calls f (the forward pass traces f); `.defjvp` only registers rules. (`jax.custom_vjp`,
    whose backward rule a `jax.vjp` runs: models/autodiff.py.)"""
    if call.args and not is_unknown(call.args[0]):
        return Wrapped("jax.jit", call.args[0], {}, call.span)
    return UNKNOWN


for _rule in ("defvjp", "defjvp", "defjvps"):
    METHODS[f"wrapped:jax.jit.{_rule}"] = lambda obj, call: Const(None)
# `@f.def_vmap` on a custom_vmap (jax/_src/custom_batching.py): registers the rule, returns it
METHODS["wrapped:jax.jit.def_vmap"] = lambda obj, call: call.get(0)


@model("jax.jit_decorator()")
def _jit_decorator(call: Call) -> Value:
    wrapped = call.wrapped
    return Wrapped("jax.jit", call.get(0), dict(wrapped.kwargs) if isinstance(wrapped, Wrapped) else {},
                   call.span)


@model("jax.jit()")
def _jit_apply(call: Call) -> Value:
    """Calling a jitted function traces it: Python numbers become arrays unless static."""
    from wgmma_lsp.models.entry_calls import trace_call

    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    return trace_call(call, wrapped.func, call.args, call.kwargs, wrapped.kwargs)


@model("pl.program_id", "pl.num_programs")
def _program_id(call: Call) -> Value:
    return ArrayVal((), INT32)


@model("lax.axis_index", "jax.lax.axis_index")
def _axis_index(call: Call) -> Value:
    """`lax.axis_index(axis_name)`: an int32 scalar; inside a kernel, a name nothing binds
    raises (WG113, models/axis_names.py)."""
    if axis_names.axis_index_fails(call):
        return UNKNOWN
    return ArrayVal((), INT32)


@model("pl.ds", "pl.dslice", "pl.Slice")
def _ds(call: Call) -> Value:
    start = call.get(0, "start")
    size = call.get(1, "size", Const(None))
    stride = call.get(2, "stride", Const(None))
    stride = Const(1) if isinstance(stride, Const) and stride.value is None else stride
    if isinstance(size, Const) and size.value is None and call.has(0):
        return DSliceVal(Const(0), start, stride)
    return DSliceVal(start, size, stride)


@model("plgpu.layout_cast")
def _layout_cast(call: Call) -> Value:
    x = call.get(0)
    if isinstance(x, ArrayVal):
        lay = call.get(1, "new_layout")
        return ArrayVal(x.shape, x.dtype, lay.describe() if not is_unknown(lay) else None)
    return UNKNOWN


def _transforms(v: Value) -> tuple[TransformVal, ...]:
    """A `transforms=` argument: a tuple of transforms (unknown ones kept as such)."""
    if isinstance(v, TupleVal):
        return tuple(x if isinstance(x, TransformVal) else TransformVal("unknown") for x in v.items)
    if isinstance(v, Const) and v.value in ((), None):
        return ()
    return (TransformVal("unknown"),)


def _ints(v: Value) -> tuple | None:
    if isinstance(v, TupleVal):
        items = [as_int(i) for i in v.items]
        return tuple(items) if all(i is not None for i in items) else None
    i = as_int(v)
    return (i,) if i is not None else None


@model("plgpu.TilingTransform")
def _tiling(call: Call) -> Value:
    params = _ints(call.get(0, "tiling"))
    return TransformVal("tiling", params) if params is not None else TransformVal("unknown")


@model("plgpu.SwizzleTransform")
def _swizzle(call: Call) -> Value:
    from wgmma_lsp.models.constructs import swizzle_ok

    params = _ints(call.get(0, "swizzle"))
    if not swizzle_ok(call, params[0] if params is not None and len(params) == 1 else None):
        return UNKNOWN  # JAX raises here
    return TransformVal("swizzle", params) if params is not None else TransformVal("unknown")


@model("plgpu.TransposeTransform")
def _transpose_transform(call: Call) -> Value:
    params = _ints(call.get(0, "permutation"))
    return TransformVal("transpose", params) if params is not None else TransformVal("unknown")


_NOOP = ["plgpu.commit_smem", "plgpu.wait_smem_to_gmem",
         "plgpu.set_max_registers", "plgpu.commit_smem_to_gmem_group", "plgpu.semaphore_signal",
         "pl.debug_print"]
for _n in _NOOP:
    model(_n)(lambda call: Const(None))

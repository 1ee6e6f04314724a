"""Pipelines and loops inside Mosaic GPU kernels, with what they hand to their bodies.

Each model names the JAX function it mirrors (jax 0.10.2):

- `plgpu.emit_pipeline` — `jax/_src/pallas/mosaic_gpu/pipeline.py: emit_pipeline`: the body gets
  `(indices, *smem_blocks[, carry])`, one SMEM ref per spec shaped by its block shape (the
  pipeline allocates `SMEM((slots, *block), ref.dtype, transforms=...)` and passes `.at[slot]`),
  and returns the next carry; index maps are traced with the grid indices (int32 scalars).
- `plgpu.emit_pipeline_warp_specialized` — same file, `emit_pipeline_warp_specialized`: the body
  gets `(indices, *smem_blocks[, *consumed_barriers][, carry])`; with `compute_context`, JAX calls
  `compute_context(pipeline_callback)` and `pipeline_callback(init_carry)` runs the body with that
  carry and returns the final one. `.get_allocations(*gmem_refs)` gives the allocations a
  `pl.run_scoped` makes for it (a dict; passed back through `allocations=`).
- `plgpu.nd_loop` — `jax/_src/pallas/mosaic_gpu/helpers.py: nd_loop`: the body gets an
  `NDLoopInfo(index=(int32[],)*len(grid), local_index=int32[], num_local_steps=int32[])` and,
  with `init_carry`, `carry=` (returning the next one); `dynamic_scheduling_loop` likewise.
- `plgpu.planar_snake` — helpers.py: a tuple of int32 scalars, one per dimension.
- `pl.loop` — `jax/_src/pallas/helpers.py: loop`: body(index[, carry]).
- `pl.core_map` — `jax/_src/pallas/core.py: core_map`: body() traced once.
- `plgpu.warp_map` — `jax/_src/pallas/mosaic_gpu/helpers.py: warp_map`: a `WarpMesh` core_map
  (0.10) / `mpmd_map` (0.12) that calls `f(lax.axis_index(mesh.axis_name))` once: body(warp_id),
  warp_id an int32 scalar.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret import axis_env, loop_steps
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN, AllocSpec, ArrayVal, BlockSpecVal, Const, FuncVal, RefVal, TupleVal, Value, Wrapped,
    is_unknown, join, tree_leaves,
)
from wgmma_lsp.models.arrays import INT32
from wgmma_lsp.models.fori_loops import pipeline_carry_fails
from wgmma_lsp.models import axis_names, smem_budget
from wgmma_lsp.models.registry import ATTRIBUTES, METHODS, model


def index_scalar() -> ArrayVal:
    """A traced grid/loop index: `int32[]`."""
    return ArrayVal((), INT32)


def _is_none(v: Value | None) -> bool:
    return v is None or (isinstance(v, Const) and v.value is None)


def _flat(v: Value) -> list[Value] | None:
    """Leaves of a tuple/list/dict pytree of specs or refs; None when the structure is unknown."""
    return tree_leaves(v, lambda x: not is_unknown(x))


def trace_index_map(call: Call, spec: Value, indices: list[Value]) -> None:
    """JAX calls each spec's `index_map(*grid_indices)` (BufferedRef.compute_gmem_slice)."""
    fn = getattr(spec, "index_map", None)
    if isinstance(fn, FuncVal):
        call.interp.call_traced(fn, list(indices), call)


def smem_block(gmem: Value, spec: Value, call: Call, i: int, slots: int | None = None) -> Value:
    """The SMEM ref a pipeline body sees for one spec: the block of `gmem` (pipeline.py:
    `SMEM((slots, *_get_block_shape(spec, gmem_ref.shape)), gmem_ref.dtype, transforms=...)`,
    then `.at[slot]`). Specs pinned to GMEM (`memory_space=plgpu.GMEM`) give the GMEM ref."""
    from wgmma_lsp.models.block_refs import block_ref as _block_ref

    array = gmem.inner if isinstance(gmem, RefVal) else UNKNOWN
    ref = _block_ref(array, spec, "smem", call.span, f"pipeline block {i}")
    if isinstance(spec, BlockSpecVal) and spec.memory_space == "gmem" and isinstance(gmem, RefVal):
        return gmem
    return RefVal(ref.inner, "smem", "plain", ref.transforms, origin=ref.origin,
                  origin_desc=ref.origin_desc, spec_span=getattr(spec, "span", None),
                  attrs=(("pipeline_slot", True),) + (((f"pipeline_slots={slots}", True),) if slots else ()))
    # `.at[slot]` of the pipeline's (slots, *block) buffer


def _grid_indices(grid: Value) -> tuple[Value, list[Value]]:
    if isinstance(grid, TupleVal):
        idx = [index_scalar() for _ in grid.items]
        return TupleVal(tuple(idx)), idx
    return UNKNOWN, []


class _AllocationRaises(Exception):
    """JAX raises while it allocates a pipeline's SMEM buffers (reported): nothing runs."""


def _pipeline_blocks(call: Call, kw: dict[str, Value],
                     allocates: bool = True) -> tuple[Value, list[Value]] | None:
    """(indices, one SMEM block per spec) for `pipeline(*gmem_refs)`, or None when the specs
    or the refs are not known one to one. `allocates`: the pipeline allocates its buffers itself
    (`SMEM((slots, *block), dtype, transforms=spec.transforms)` in its `run_scoped`, before it
    traces anything): transforms that do not fit a block raise there (`_AllocationRaises`)."""
    indices, idx_list = _grid_indices(kw.get("grid", UNKNOWN))
    in_specs = _flat(kw.get("in_specs", TupleVal(())))
    out_specs = _flat(kw.get("out_specs", TupleVal(())))
    gmem = _flat(TupleVal(tuple(call.args)))
    if in_specs is None or out_specs is None or gmem is None or not call.complete \
            or len(gmem) != len(in_specs) + len(out_specs):
        return None
    from wgmma_lsp.models.pipeline_smem import pipeline_slots

    specs = in_specs + out_specs
    blocks = []
    for i, (ref, spec) in enumerate(zip(gmem, specs)):
        slots = pipeline_slots(call, kw, i, len(in_specs))
        block = smem_block(ref, spec, call, i, slots)
        if allocates and not _block_fits(call, block, spec, slots):
            raise _AllocationRaises()
        blocks.append(block)
    for spec in specs:
        trace_index_map(call, spec, idx_list)
    return indices, blocks


def _block_fits(call: Call, block: Value, spec: Value, slots: int | None) -> bool:
    """Whether the tiling and swizzle of a pipeline's SMEM block fit its `(slots, *block)`
    buffer, as for any allocation (transforms.py: WG063, WG064, reported at the call)."""
    from wgmma_lsp.models.transforms import transforms_apply

    if not isinstance(block, RefVal) or block.space != "smem" or block.attr("pipeline_slot") is not True \
            or not block.transforms or block.shape is None:
        return True
    shape = (slots, *block.shape) if slots is not None else block.shape
    alloc = AllocSpec("smem", ArrayVal(shape, block.dtype), span=getattr(spec, "span", None),
                      transforms=block.transforms)
    return transforms_apply(call, alloc)


def _run_generic(call: Call, body: Value) -> Value:
    if isinstance(body, FuncVal):
        call.interp.call_value(body, Call(call.interp, call.node, [], {}, [], {}, call.env, generic=True))
    return UNKNOWN


# -- emit_pipeline ----------------------------------------------------------------------------
@model("plgpu.emit_pipeline")
def _emit_pipeline(call: Call) -> Value:
    from wgmma_lsp.models.pipeline_checks import pipeline_ok

    if not pipeline_ok(call):
        return UNKNOWN  # JAX raises here
    return Wrapped("plgpu.emit_pipeline", call.get(0, "body"), dict(call.kwargs), call.span)


@model("plgpu.emit_pipeline()")
def _emit_pipeline_apply(call: Call) -> Value:
    """`emit_pipeline(body, grid=, in_specs=, out_specs=, init_carry=)(*gmem_refs)`: the body
    runs inside the pipeline's `run_scoped` of its SMEM buffers and barrier."""
    from wgmma_lsp.models.pipeline_smem import emit_pipeline_scope

    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    kw = wrapped.kwargs
    scope = smem_budget.enter_pipeline(call.interp, emit_pipeline_scope(call, kw))
    try:
        try:
            found = _pipeline_blocks(call, kw)
        except _AllocationRaises:
            return UNKNOWN  # JAX raises here
        if found is None:
            return _run_generic(call, wrapped.func)
        indices, blocks = found
        carry = kw.get("init_carry")
        args = [indices, *blocks] + ([] if _is_none(carry) else [carry])  # type: ignore[list-item]
        result = call.interp.call_traced(wrapped.func, args, call)
        if _is_none(carry):
            return Const(None)
        # the loop carry is (indices, fetch_index_levels, last_store_indices, init_carry)
        if pipeline_carry_fails(call, kw.get("grid"), carry, result, "[3]"):  # type: ignore[arg-type]
            return UNKNOWN  # JAX raises here (WG094)
        return _carry_out(carry, result)  # type: ignore[arg-type]
    finally:
        smem_budget.leave(call.interp, scope)


def _carry_out(init: Value, result: Value) -> Value:
    """The carry a loop returns: the body's result when it keeps the init's structure."""
    joined = join(init, result)
    return joined if not is_unknown(joined) else result


# -- emit_pipeline_warp_specialized -------------------------------------------------------------
@model("plgpu.emit_pipeline_warp_specialized")
def _emit_pipeline_ws(call: Call) -> Value:
    return Wrapped("plgpu.emit_pipeline_warp_specialized", call.get(0, "body"), dict(call.kwargs),
                   call.span)


@model("plgpu.emit_pipeline_warp_specialized()")
def _emit_pipeline_ws_apply(call: Call) -> Value:
    """`pipeline(*gmem_refs, allocations=None)`: the compute thread runs the body over SMEM
    blocks; with `compute_context`, through `compute_context(pipeline_callback)`."""
    from wgmma_lsp.models.pipeline_smem import warp_specialized_scope

    allocations = call.kwargs.get("allocations")
    if _is_none(allocations):  # the pipeline allocates for itself, in a run_scoped of its own
        scope = smem_budget.enter_pipeline(call.interp, warp_specialized_scope(call, call.wrapped.kwargs))
    else:  # `allocations=` from the user's own run_scoped of `get_allocations(...)`
        scope = None
    try:
        return _run_ws(call)
    finally:
        smem_budget.leave(call.interp, scope)


def _run_ws(call: Call) -> Value:
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    kw = wrapped.kwargs
    gmem_call = Call(call.interp, call.node, list(call.args), {}, list(call.arg_nodes), {},
                     call.env, call.complete)
    try:  # (with the user's `allocations=`, their run_scoped allocated the buffers)
        found = _pipeline_blocks(gmem_call, kw, allocates=_is_none(call.kwargs.get("allocations")))
    except _AllocationRaises:
        return UNKNOWN  # JAX raises here
    context = kw.get("compute_context")
    if found is None:
        _run_generic(call, wrapped.func)
        if isinstance(context, FuncVal):
            _run_generic(call, context)
        return Const(None)
    indices, blocks = found
    args: list[Value] = [indices, *blocks]
    manual = kw.get("manual_consumed_barriers")
    if isinstance(manual, Const) and manual.value is True:
        n_in = len(_flat(kw.get("in_specs", TupleVal(()))) or [])
        args += [barrier_ref(kw.get("max_concurrent_steps", Const(2)), call) for _ in range(n_in)]
    elif manual is not None and not (isinstance(manual, Const) and manual.value is False):
        return _run_generic(call, wrapped.func)  # unknown flag: the arguments are not known
    if _is_none(context):
        call.interp.call_traced(wrapped.func, args, call)
        return Const(None)
    callback = Wrapped("plgpu.pipeline_callback", wrapped.func,
                       {"args": TupleVal(tuple(args)), "grid": kw.get("grid", UNKNOWN)}, call.span)
    call.interp.call_traced(context, [callback], call)  # type: ignore[arg-type]
    return Const(None)


@model("plgpu.pipeline_callback()")
def _pipeline_callback(call: Call) -> Value:
    """`pipeline_callback(init_carry)` inside `compute_context`: the body runs with the carry
    last and returns the next one; the final carry comes back (pipeline.py)."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    args = wrapped.kwargs["args"]
    assert isinstance(args, TupleVal)
    carry = call.get(0)
    result = call.interp.call_traced(wrapped.func, [*args.items, carry], call)
    # the loop carry is (init_indices, last_store_indices, user_init_carry)
    if pipeline_carry_fails(call, wrapped.kwargs.get("grid"), carry, result, "[2]"):
        return UNKNOWN  # JAX raises here (WG094)
    return _carry_out(carry, result)


def barrier_ref(num_barriers: Value, call: Call) -> RefVal:
    """One barrier ref (`.at[slot]` of a barrier array): `Ref<smem>{barrier[]}`-like."""
    from wgmma_lsp.interpret.dtypes import DType

    return RefVal(ArrayVal((), DType("barrier")), "smem", "barrier", origin=call.span,
                  origin_desc="pipeline consumed barrier")


def _get_allocations(obj: Value, call: Call) -> Value:
    """`pipeline.get_allocations(*gmem_refs)`: what `pl.run_scoped` allocates for it (a dict of
    SMEM buffers and barriers, handed back through `allocations=`; models/pipeline_smem.py)."""
    from wgmma_lsp.models.pipeline_smem import warp_specialized_allocations

    assert isinstance(obj, Wrapped)
    allocs = warp_specialized_allocations(call, obj.kwargs)
    return allocs if allocs is not None else UNKNOWN


METHODS["wrapped:plgpu.emit_pipeline_warp_specialized.get_allocations"] = _get_allocations


# -- loops ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NDLoopInfoVal(Value):
    """`plgpu.NDLoopInfo`: the grid indices, the local step and the number of local steps."""

    index: TupleVal
    # What `plgpu.NDLoopInfo(index, local_index=0, num_local_steps=1)` was given (None: the
    # loop's own, an int32 scalar).
    local_index: Value | None = None
    num_local_steps: Value | None = None

    def describe(self) -> str:
        return "NDLoopInfo"

    def hover_text(self) -> str:
        return (f"NDLoopInfo(index={self.index.describe()}, local_index=int32[], "
                "num_local_steps=int32[])")


ATTRIBUTES["NDLoopInfoVal.index"] = lambda o: o.index
ATTRIBUTES["NDLoopInfoVal.local_index"] = lambda o: o.local_index if o.local_index is not None else index_scalar()
ATTRIBUTES["NDLoopInfoVal.num_local_steps"] = lambda o: o.num_local_steps if o.num_local_steps is not None else index_scalar()


@model("plgpu.NDLoopInfo")
def _nd_loop_info(call: Call) -> Value:
    """`plgpu.NDLoopInfo(index, local_index, num_local_steps)` (a dataclass of
    jax/_src/pallas/mosaic_gpu/helpers.py) built by the user, as a loop wrapper does."""
    index = call.get(0, "index")
    if not isinstance(index, TupleVal) or not call.complete:
        return UNKNOWN
    return NDLoopInfoVal(TupleVal(index.items), call.get(1, "local_index"),
                         call.get(2, "num_local_steps"))


def _loop_with_info(name: str):
    @model(name)
    def make(call: Call) -> Value:
        if name.endswith("nd_loop") and axis_names.nd_loop_fails(call):
            return UNKNOWN  # nd_loop takes `lax.axis_index(collective_axes)` first thing
        kwargs = dict(call.kwargs)
        # nd_loop(grid, ...) indexes its grid; dynamic_scheduling_loop(grid_names, ...) gives one
        # index per grid name.
        kwargs["grid"] = call.get(0, "grid_names" if name.endswith("dynamic_scheduling_loop") else "grid")
        return Wrapped(name, UNKNOWN, kwargs, call.span)

    @model(name + "()")
    def apply(call: Call) -> Value:
        wrapped = call.wrapped
        assert isinstance(wrapped, Wrapped)
        grid = wrapped.kwargs.get("grid", UNKNOWN)
        n = len(grid.items) if isinstance(grid, TupleVal) else None
        info: Value = (NDLoopInfoVal(TupleVal(tuple(index_scalar() for _ in range(n))))
                       if n is not None else UNKNOWN)
        carry = wrapped.kwargs.get("init_carry")
        body = call.get(0)
        scope = None
        if name.endswith("dynamic_scheduling_loop"):
            from wgmma_lsp.models.pipeline_smem import dynamic_scheduling_scope

            scope = smem_budget.enter_pipeline(call.interp, dynamic_scheduling_scope(wrapped.kwargs))
        try:
            if _is_none(carry):
                call.interp.call_traced(body, [info], call)
                return Const(None)
            from wgmma_lsp.models.entry_calls import traced_value

            # The loop is a lax.fori_loop/while_loop: its carry is traced (`0` is a weak int32).
            carry = traced_value(carry)  # type: ignore[arg-type]
            result = call.interp.call_value(body, Call(call.interp, call.node, [info], {"carry": carry},
                                                       [None], {}, call.env))
            return _carry_out(carry, result)  # type: ignore[arg-type]
        finally:
            smem_budget.leave(call.interp, scope)

    make.__doc__ = f"`{name}(grid, *, collective_axes, init_carry=None)` as a decorator."
    apply.__doc__ = "The body is traced once with an NDLoopInfo (and `carry=` when given)."


_loop_with_info("plgpu.nd_loop")
_loop_with_info("plgpu.dynamic_scheduling_loop")


@model("plgpu.planar_snake")
def _planar_snake(call: Call) -> Value:
    """`planar_snake(lin_idx, shape, minor_dim, tile_width)`: one int32 index per dimension."""
    shape = call.get(1, "shape")
    if isinstance(shape, TupleVal):
        return TupleVal(tuple(index_scalar() for _ in shape.items))
    return UNKNOWN


@model("pl.loop")
def _loop(call: Call) -> Value:
    return Wrapped("pl.loop", UNKNOWN, {"init_carry": call.kwargs.get("init_carry", Const(None))},
                   call.span)


@model("pl.loop()")
def _loop_apply(call: Call) -> Value:
    """`@pl.loop(lower, upper, *, step=1, init_carry=None)`: body(index[, carry])."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    carry = wrapped.kwargs.get("init_carry")
    body = call.get(0)
    index = loop_steps.take_index(call.interp)  # int32[] (with its steps, for the race analysis)
    if _is_none(carry):
        call.interp.call_traced(body, [index], call)
        return Const(None)
    result = call.interp.call_traced(body, [index, carry], call)  # type: ignore[list-item]
    return _carry_out(carry, result)  # type: ignore[arg-type]


@model("pl.core_map")
def _core_map(call: Call) -> Value:
    return Wrapped("pl.core_map", UNKNOWN, dict(call.kwargs), call.span)


@model("pl.core_map()")
def _core_map_apply(call: Call) -> Value:
    """`@pl.core_map(mesh)`: the body is traced once, with no arguments (under the mesh's axis
    names, not followed here)."""
    with axis_env.bound(None):
        call.interp.call_traced(call.get(0), [], call)
    return Const(None)


@model("plgpu.warp_map")
def _warp_map(call: Call) -> Value:
    """`@plgpu.warp_map def body(warp_id)`: traced once with the warp index (`int32[]`), under a
    warp mesh's axis name (not followed here)."""
    with axis_env.bound(None):
        call.interp.call_traced(call.get(0), [index_scalar()], call)
    return Const(None)

"""The shared memory a pipeline allocates for itself: the `run_scoped` that
`plgpu.emit_pipeline(...)(*gmem_refs)` and `plgpu.emit_pipeline_warp_specialized(...)(*gmem_refs)`
open around their body (jax/_src/pallas/mosaic_gpu/pipeline.py, jax 0.10.2 and 0.12.0.1):

- `emit_pipeline`: `max_concurrent_steps` (default 1) is clamped to the number of grid steps
  when the grid is static; each spec in SMEM (`_in_smem`: memory space unset, DEFAULT or SMEM)
  gets `SMEM((max_concurrent_steps, *block_shape), gmem_ref.dtype)`; when any input is in SMEM,
  one `Barrier(num_arrivals=<inputs in SMEM>, num_barriers=max_concurrent_steps)`.
- `emit_pipeline_warp_specialized` (`_get_scoped_allocs`): `max_concurrent_steps` (default 2)
  clamped likewise; every spec gets `SMEM((slots, *block_shape), dtype)`, `slots` =
  `max_concurrent_steps`, or 1 for an output whose index map ignores the grid
  (`_is_index_invariant`); the produced barrier(s): one `Barrier(num_arrivals=<inputs>,
  num_barriers=max_concurrent_steps)` (0.12 with `manual_produced_barriers=True`: one
  `Barrier(num_barriers=max_concurrent_steps)` per input); the consumed barrier(s):
  `Barrier(num_arrivals=num_compute_wgs, num_barriers=max_concurrent_steps)` — one, or one per
  input with `manual_consumed_barriers=True` — `ClusterBarrier`s when an input spec has
  `collective_axes`. Specs and refs are flattened as pytrees (`jax.tree.flatten`): a `None`
  spec with its `None` ref is an empty subtree, with no buffer and no barrier of its own.

`_get_block_shape`: the spec's block shape without its `None`/`pl.Squeezed` dimensions, or the
GMEM ref's shape when the spec has none. Anything not known makes the scope a lower bound.
"""

from __future__ import annotations

import ast
import math

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.target_gpu import before_hopper
from wgmma_lsp.interpret.values import (
    ArrayVal, BlockSpecVal, Const, FuncVal, RefVal, TupleVal, Value, as_int, is_unknown, tree_leaves,
)
from wgmma_lsp.models.smem_budget import Scope


def _flat(v: Value | None) -> list[Value] | None:
    if v is None:
        return []
    return tree_leaves(v, lambda x: not is_unknown(x))


def _steps(kw: dict[str, Value], default: int) -> tuple[int | None, int | None]:
    """(max_concurrent_steps after JAX's clamp, the static number of grid steps or None)."""
    mcs = as_int(kw.get("max_concurrent_steps", Const(default)))
    grid = kw.get("grid")
    if not isinstance(grid, TupleVal):
        return None, None
    dims = [as_int(g) for g in grid.items]
    if any(d is None for d in dims):
        dynamic = all(d is not None or (isinstance(g, ArrayVal) and g.shape == ())
                      for d, g in zip(dims, grid.items))
        return (mcs if dynamic else None), None  # a dynamic grid: no clamp
    num_steps = math.prod(dims)  # type: ignore[arg-type]
    if mcs is not None and mcs > num_steps:
        mcs = num_steps
    return mcs, num_steps


def _specs_and_refs(call: Call, kw: dict[str, Value]) -> tuple[list[Value], list[Value], list[Value]] | None:
    ins, outs = _flat(kw.get("in_specs")), _flat(kw.get("out_specs"))
    gmem = _flat(TupleVal(tuple(call.args)))
    if ins is None or outs is None or gmem is None or not call.complete or len(gmem) != len(ins) + len(outs):
        return None
    return ins, outs, gmem


def _is_none(v: Value) -> bool:
    return isinstance(v, Const) and v.value is None


def _ws_specs_and_refs(call: Call, kw: dict[str, Value]) -> tuple[list[Value], list[Value], list[Value]] | None:
    """The flat specs and GMEM refs as `emit_pipeline_warp_specialized` flattens them
    (`jax.tree.flatten`: a `None` is an empty subtree, so a `None` spec and its `None` ref
    take no buffer and no barrier); None when a `None` spec does not meet a `None` ref."""
    found = _specs_and_refs(call, kw)
    if found is None:
        return None
    ins, outs, gmem = found
    if any(_is_none(s) != _is_none(r) for s, r in zip(ins + outs, gmem)):
        return None
    keep = [not _is_none(s) for s in ins + outs]
    return ([s for s, k in zip(ins, keep) if k], [s for s, k in zip(outs, keep[len(ins):]) if k],
            [r for r, k in zip(gmem, keep) if k])


def _block(spec: BlockSpecVal, gmem: Value) -> ArrayVal | None:
    """`_get_block_shape(spec, gmem_ref.shape)` with the GMEM ref's dtype."""
    from wgmma_lsp.models.block_refs import block_ref as _block_ref

    if not isinstance(gmem, RefVal):
        return None
    return _block_ref(gmem.inner, spec, "smem", None, "").inner


def _in_smem(spec: BlockSpecVal) -> bool | None:
    if spec.memory_space in ("default", "smem"):
        return True
    if spec.memory_space in (None, "?"):
        return None
    return False


def _label(i: int, n_in: int) -> str:
    return f"pipeline input {i}" if i < n_in else f"pipeline output {i - n_in}"


def emit_pipeline_scope(call: Call, kw: dict[str, Value]) -> Scope:
    """The allocations of `emit_pipeline(...)(*gmem_refs)`'s own `run_scoped`."""
    scope = Scope()
    mcs, _ = _steps(kw, 1)
    found = _specs_and_refs(call, kw)
    if mcs is None or found is None:
        scope.complete = False
        return scope
    ins, outs, gmem = found
    smem_inputs = 0
    for i, (spec, ref) in enumerate(zip(ins + outs, gmem)):
        in_smem = _in_smem(spec) if isinstance(spec, BlockSpecVal) else None
        if in_smem is None:
            scope.complete = False
            continue
        if not in_smem:
            continue
        if i < len(ins):
            smem_inputs += 1
        block = _block(spec, ref)  # type: ignore[arg-type]
        if block is None:
            scope.complete = False
            continue
        scope.add_buffer(block, f"{_label(i, len(ins))}: {block.aval()} x {mcs}", mcs, spec.span)
    # Before Hopper the pipeline copies with cp.async and waits with `wait_gmem_to_smem`: it
    # allocates no barriers (jax/_src/pallas/mosaic_gpu/pipeline.py, `is_cp_async`).
    if smem_inputs and not before_hopper(call.interp):
        scope.add_barrier("barrier", smem_inputs, mcs, what=f"pipeline barriers x {mcs}")
    return scope


def _uses_grid(spec: BlockSpecVal, n_grid: int) -> bool | None:
    """Whether a spec's index map reads its grid indices (`_uses_arguments`), read from its
    source: a parameter named in its body; None when not known."""
    fn = spec.index_map
    if fn is None or (isinstance(fn, Const) and fn.value is None):
        return False
    if not isinstance(fn, FuncVal):
        return None
    args = fn.node.args
    if args.vararg is not None or args.kwarg is not None:
        return None
    params = [a.arg for a in args.posonlyargs + args.args][:n_grid]
    body = fn.node.body if isinstance(fn.node, ast.Lambda) else ast.Module(fn.node.body, [])
    names = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)}  # type: ignore[arg-type]
    return any(p in names for p in params)


def _bool_kw(kw: dict[str, Value], name: str) -> bool | None:
    v = kw.get(name, Const(False))
    if isinstance(v, Const) and (v.value is None or isinstance(v.value, bool)):
        return bool(v.value)
    return None


def warp_specialized_scope(call: Call, kw: dict[str, Value]) -> Scope:
    """The allocations of `emit_pipeline_warp_specialized(...)(*gmem_refs)`'s own `run_scoped`."""
    scope = Scope()
    mcs, _ = _steps(kw, 2)
    found = _ws_specs_and_refs(call, kw)
    grid = kw.get("grid")
    if mcs is None or found is None or not isinstance(grid, TupleVal):
        scope.complete = False
        return scope
    ins, outs, gmem = found
    for i, (spec, ref) in enumerate(zip(ins + outs, gmem)):
        if not isinstance(spec, BlockSpecVal):
            scope.complete = False
            continue
        slots: int | None = mcs
        if i >= len(ins):
            uses = _uses_grid(spec, len(grid.items))
            slots = None if uses is None else (mcs if uses else 1)
        block = _block(spec, ref)
        if block is None or slots is None:
            scope.complete = False
            continue
        scope.add_buffer(block, f"{_label(i, len(ins))}: {block.aval()} x {slots}", slots, spec.span)
    produced, consumed = _bool_kw(kw, "manual_produced_barriers"), _bool_kw(kw, "manual_consumed_barriers")
    wgs = as_int(kw.get("num_compute_wgs", Const(None)))
    # ClusterBarriers when an input spec has `collective_axes` (their names are not kept).
    collective = any(isinstance(s, BlockSpecVal) and s.collective_axes for s in ins)
    if produced is None or consumed is None or wgs is None \
            or any(isinstance(s, BlockSpecVal) and s.collective_axes is None for s in ins):
        scope.complete = False
        return scope
    if produced:
        for _ in ins:
            scope.add_barrier("barrier", 1, mcs)
    else:
        scope.add_barrier("barrier", len(ins), mcs)
    kind = "cluster_barrier" if collective else "barrier"
    for _ in (ins if consumed else [None]):
        scope.add_barrier(kind, wgs, mcs)
    scope.parts.append(f"pipeline barriers x {mcs}: {8 * mcs * (sum(scope.own_barriers.values())):,} B")
    return scope


def pipeline_slots(call: Call, kw: dict[str, Value], i: int, n_in: int) -> int | None:
    """The slots of spec `i`'s SMEM buffer (its leading dimension), None when not known."""
    ws = "wg_axis" in kw or "num_compute_wgs" in kw  # emit_pipeline_warp_specialized's own
    mcs, _ = _steps(kw, 2 if ws else 1)
    if mcs is None or not ws or i < n_in:
        return mcs
    specs = _flat(kw.get("out_specs"))
    grid = kw.get("grid")
    if specs is None or not isinstance(grid, TupleVal) or i - n_in >= len(specs) \
            or not isinstance(specs[i - n_in], BlockSpecVal):
        return None
    uses = _uses_grid(specs[i - n_in], len(grid.items))  # type: ignore[arg-type]
    return None if uses is None else (mcs if uses else 1)


def dynamic_scheduling_scope(kw: dict[str, Value]) -> Scope:
    """`plgpu.dynamic_scheduling_loop`'s own `run_scoped` (helpers.py): a
    `TryClusterCancelResult(2)` (`SMEM((2, 16), int8)`), `Barrier(num_threads, 2)` and the
    cancel-used barrier (a `ClusterBarrier` with `cluster_axes`), `num_threads` the size of
    `thread_axis` (1 without one; not known here otherwise: the barrier kind is then unsure)."""
    from wgmma_lsp.interpret.dtypes import DType

    scope = Scope()
    scope.add_buffer(ArrayVal((2, 16), DType("int8")), "dynamic_scheduling_loop TryClusterCancelResult(2)")
    thread_axis, cluster_axes = kw.get("thread_axis", Const(None)), kw.get("cluster_axes", Const(()))
    arrivals = 1 if isinstance(thread_axis, Const) and thread_axis.value is None else None
    if isinstance(cluster_axes, TupleVal):
        clustered: bool | None = bool(cluster_axes.items)
    elif isinstance(cluster_axes, Const) and not isinstance(cluster_axes.value, str):
        clustered = bool(cluster_axes.value)
    else:
        clustered = None if not isinstance(cluster_axes, Const) else True
    if clustered is None:
        scope.complete = False
    scope.add_barrier("barrier", arrivals, 2)
    scope.add_barrier("cluster_barrier" if clustered else "barrier", arrivals, 2,
                      what="dynamic_scheduling_loop barriers")
    return scope


def warp_specialized_allocations(call: Call, kw: dict[str, Value]) -> Value | None:
    """`pipeline.get_allocations(*gmem_refs)` (`_get_scoped_allocs`): the dict the user's own
    `pl.run_scoped` allocates — per spec `SMEM((slots, *block_shape), gmem_ref.dtype,
    transforms=spec.transforms)`, the produced and the consumed barriers — as allocation specs
    (no span of their own: JAX blames their errors on the `run_scoped` that allocates them).
    None when any part is not known."""
    from wgmma_lsp.interpret.dtypes import DType
    from wgmma_lsp.interpret.jax_version import matches
    from wgmma_lsp.interpret.values import AllocSpec, DictVal

    mcs, _ = _steps(kw, 2)
    found = _ws_specs_and_refs(call, kw)
    grid = kw.get("grid")
    if mcs is None or found is None or not isinstance(grid, TupleVal):
        return None
    ins, outs, gmem = found
    smem: list[Value] = []
    for i, (spec, ref) in enumerate(zip(ins + outs, gmem)):
        if not isinstance(spec, BlockSpecVal):
            return None
        slots: int | None = mcs
        if i >= len(ins):
            uses = _uses_grid(spec, len(grid.items))
            slots = None if uses is None else (mcs if uses else 1)
        block = _block(spec, ref)
        if block is None or block.shape is None or slots is None:
            return None
        smem.append(AllocSpec("smem", ArrayVal((slots, *block.shape), block.dtype),
                              transforms=spec.transforms))
    produced, consumed = _bool_kw(kw, "manual_produced_barriers"), _bool_kw(kw, "manual_consumed_barriers")
    wgs = as_int(kw.get("num_compute_wgs", Const(None)))
    if produced is None or consumed is None or wgs is None:
        return None
    collective = any(isinstance(s, BlockSpecVal) and s.collective_axes for s in ins)
    if any(isinstance(s, BlockSpecVal) and s.collective_axes is None for s in ins):
        return None

    def barrier(kind: str, arrivals: int) -> AllocSpec:
        return AllocSpec("barrier", ArrayVal((mcs,), DType(kind)), arrivals=arrivals,
                         attrs=(("orders_tensor_core", False),))

    kind = "cluster_barrier" if collective else "barrier"
    consumed_bars = TupleVal(tuple(barrier(kind, wgs) for _ in (ins if consumed else [None])), True)
    smem_in, smem_out = TupleVal(tuple(smem[:len(ins)]), True), TupleVal(tuple(smem[len(ins):]), True)
    if matches("<0.11"):  # jax 0.10: one produced barrier, `in_smem_barrier_ref`
        return DictVal((("flat_in_smem_refs", smem_in), ("flat_out_smem_refs", smem_out),
                        ("in_smem_barrier_ref", barrier("barrier", len(ins))),
                        ("flat_consumed_barrier_refs", consumed_bars)))
    if not matches(">=0.12"):
        return None  # a JAX whose dict was not read
    produced_bars = [barrier("barrier", 1) for _ in ins] if produced else [barrier("barrier", len(ins))]
    return DictVal((("flat_in_smem_refs", smem_in), ("flat_out_smem_refs", smem_out),
                    ("flat_produced_barrier_refs", TupleVal(tuple(produced_bars), True)),
                    ("flat_consumed_barrier_refs", consumed_bars)))

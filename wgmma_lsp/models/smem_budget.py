"""The shared memory a Mosaic GPU kernel allocates, as the installed JAX counts it.

Mirrors `Resources` and the resource estimators in `jax/_src/pallas/mosaic_gpu/lowering.py`
(jax 0.10.2 and 0.12.0.1 count alike): each `run_scoped` allocation is rounded up to
`SMEM_ALIGNMENT` = 1024 bytes; allocations of one scope add up, nested scopes add to their
parent, scopes one after another take the maximum. Barriers are a `Counter` of barrier kinds
(`mgpu.Barrier(num_arrivals, num_barriers, orders_tensor_core)`): nesting adds the counts,
siblings keep the larger count of each kind (`Counter.__or__`), so two sibling scopes with
different barriers keep both. `_smem_tree_size` / `_launch` in
`jax/experimental/mosaic/gpu/core.py` then add 8 bytes per mbarrier (and 4 for a TMEM address)
to the aligned scratch bytes and compare with the device limit: 227 KiB = 232,448 bytes on sm_90
when no GPU is present.

Pipelines allocate in a `run_scoped` of their own (jax/_src/pallas/mosaic_gpu/pipeline.py):
`plgpu.emit_pipeline` one `SMEM((max_concurrent_steps, *block_shape), dtype)` per spec in SMEM
(memory space unset, DEFAULT or SMEM) and `Barrier(num_arrivals=<SMEM inputs>,
num_barriers=max_concurrent_steps)` when an input is in SMEM, `max_concurrent_steps` clamped
to the number of grid steps; `emit_pipeline_warp_specialized` one buffer per spec
(`max_concurrent_steps` slots, 1 for an output whose index map ignores the grid), an input
barrier and the consumed barriers. A `pallas_call` runs `emit_pipeline` over its sequential grid
inside a `run_scoped` of its `scratch_shapes` (lower_pipelined_jaxpr_to_module).

Only allocations on every path are counted (those under an undecided Python branch are not), and
allocations wgmma-lsp cannot size count as zero: such a total is a lower bound of JAX's
(`complete=False`), reported in our own words ("at least ..."), never as JAX's message.
A reduction (`jnp.sum`, `x.max()`, … — the primitives the installed JAX's
`_reduce_resource_estimator` is registered for, read by `interpret/jax_reduction_scratch.py`)
asks for `reduction_scratch_bytes` (the kernel's `CompilerParams`, 2,048 by default), taken like
a scope run after its siblings: the maximum with them, inside its parent.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.interpret.dtypes import itemsize_bits
from wgmma_lsp.rules.base import Related, kernel_level_note
from wgmma_lsp.interpret.values import (
    AllocSpec, ArrayVal, Const, DictVal, RefVal, TupleVal, Value, Wrapped, as_int, next_born,
)

SMEM_ALIGNMENT = 1024
MBARRIER_BYTES = 8
MAX_SMEM_BYTES = 227 * 1024  # sm_90 and sm_100, when JAX cannot ask a device

# A kind of barrier, as `Resources.barrier_counts` keys them (`mgpu.Barrier` /
# `mgpu.ClusterBarrier` are frozen dataclasses, equal when every field is): (type,
# num_arrivals, num_barriers, orders_tensor_core, the cluster barrier's collective axes — () for
# a plain barrier). A field not known is None: the bytes of one scope do not depend on it (its
# barriers add up whatever they are), but whether two sibling scopes share a kind does
# (`barrier_counts | ...`), so such a merge makes the total a lower bound (`merge_barriers`).
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    BarrierKey = tuple[str, "int | None", int, "bool | None", Any]


def align(n: int) -> int:
    return (n + SMEM_ALIGNMENT - 1) // SMEM_ALIGNMENT * SMEM_ALIGNMENT


def barrier_bytes(barriers: Counter) -> int:
    return sum(MBARRIER_BYTES * key[2] * n for key, n in barriers.items())


@dataclass
class Scope:
    """One `run_scoped` (or the kernel): what it allocates itself, and the largest of the
    scopes it runs one after another."""

    own_bytes: int = 0
    own_barriers: Counter = field(default_factory=Counter)
    inner_bytes: int = 0
    inner_barriers: Counter = field(default_factory=Counter)
    complete: bool = True
    parts: list[str] = field(default_factory=list)
    inner_parts: list[str] = field(default_factory=list)  # those of the largest inner scope
    tmem: bool = False  # allocates tensor memory: its address takes 4 bytes of SMEM
    # What allocated the bytes, for related locations: (span, text, bytes).
    causes: list[tuple[Any, str, int]] = field(default_factory=list)
    inner_causes: list[tuple[Any, str, int]] = field(default_factory=list)
    # The kernel's `reduction_scratch_bytes` (set on its root scope; None: not known).
    reduction_bytes: int | None = None

    def total(self) -> tuple[int, Counter]:
        return self.own_bytes + self.inner_bytes, self.own_barriers + self.inner_barriers

    def add_buffer(self, array: ArrayVal, what: str, slots: int = 1, span=None) -> None:
        """One SMEM allocation of `slots` x `array` (aligned as JAX aligns it); `span`: the
        expression that asked for it (an allocation, a BlockSpec)."""
        n = _array_bytes(array)
        if n is None:
            self.complete = False
            return
        size = align(n * slots)
        self.own_bytes += size
        self.parts.append(f"{what}: {size:,} B")
        if span is not None:
            self.causes.append((span, what, size))

    def add_barrier(self, kind: str, arrivals: int | None, num_barriers: int,
                    orders_tc: bool | None = False, what: str = "", axes: Any = None) -> None:
        """`axes`: a cluster barrier's collective axes (None: not known); a barrier has none."""
        key = (kind, arrivals, num_barriers, orders_tc, () if kind == "barrier" else axes)
        self.own_barriers[key] += 1
        if what:
            self.parts.append(f"{what}: {MBARRIER_BYTES * num_barriers:,} B")


def _array_bytes(a: ArrayVal) -> int | None:
    if a.shape is None or T.concrete(a.dtype) is None or not all(isinstance(d, int) for d in a.shape):
        return None
    try:
        bits = itemsize_bits(a.dtype)
    except ValueError:
        return None
    return math.prod(a.shape) * bits // 8  # type: ignore[arg-type]


def _stack(interp) -> list[Scope]:
    return interp.kernel.smem_scopes


def add_allocation(scope: Scope, spec: Value, multiplier: int = 1, what: str = "") -> None:
    """Count one allocation (`plgpu.SMEM`, `plgpu.Barrier`, a pytree of them) in `scope`."""
    if isinstance(spec, TupleVal):
        for item in spec.items:
            add_allocation(scope, item, multiplier, what)
        return
    if isinstance(spec, DictVal):  # a dict of allocations (a pipeline's `get_allocations`)
        for _, item in spec.items:
            add_allocation(scope, item, multiplier, what)
        return
    from wgmma_lsp.models.ref_union import RefUnionSpec, as_allocation

    if isinstance(spec, RefUnionSpec) and spec.space == "tmem":
        scope.tmem = True  # one TMEM allocation: its address takes 4 bytes of SMEM
        return
    if isinstance(spec, RefUnionSpec):  # one buffer, the size of its largest group
        add_allocation(scope, as_allocation(spec), multiplier, what or spec.describe())
        return
    if isinstance(spec, Const) and spec.value is None:
        return  # an empty pytree: `run_scoped` flattens its types, a None allocates nothing
    if not isinstance(spec, AllocSpec):
        scope.complete = False
        return
    if spec.kind == "tmem":
        scope.tmem = True
        return
    if spec.kind in ("acc", "gmem"):
        return  # registers, global memory
    if spec.kind in ("barrier", "cluster_barrier"):
        shape = spec.inner.shape
        if shape is None or not all(isinstance(d, int) for d in shape):
            scope.complete = False
            return
        # `plgpu.ClusterBarrier(...)` is a barrier spec of dtype cluster_barrier: another kind
        # (its collective axes are not kept: None).
        kind = "cluster_barrier" if getattr(spec.inner.dtype, "name", None) == "cluster_barrier" \
            else spec.kind
        orders = dict(spec.attrs).get("orders_tensor_core")
        scope.add_barrier(kind, spec.arrivals, math.prod(shape), orders)  # type: ignore[arg-type]
        return
    if spec.kind != "smem":
        scope.complete = False
        return
    scope.add_buffer(spec.inner, what or spec.describe(), multiplier, spec.span)


def unsized(interp) -> None:
    """Something allocates SMEM that is not counted: the kernel's total becomes a lower bound."""
    stack = _stack(interp)
    if stack:
        stack[-1].complete = False


def enter(interp, allocations: list[Value]) -> Scope | None:
    """A `run_scoped` starts: its allocations, counted only on paths that surely run."""
    stack = _stack(interp)
    if not stack:
        return None
    scope = Scope()
    for spec in allocations:
        add_allocation(scope, spec)
    return _push(interp, scope)


def not_replayable(interp) -> None:
    """The calls running now inside the kernel change its shared memory (a scope, a reduction's
    scratch): a memo replay of one of them in another kernel or scope would not redo it (its
    allocations would be missing there), so none of them is memoised. A call that started
    before the kernel did (a host function launching it) holds the whole launch, its shared
    memory counted and checked within it: its replay stands for all of it."""
    start = interp.kernel.born
    # (The hover pass keeps to the rule of old: its own memo, where there is one, replays
    # without regard to the certainty `MemoEntry.replays_here` asks about.)
    everything = getattr(interp, "hover_only", False)
    for entry in getattr(interp, "captures", ()):
        if entry.born >= start or everything:
            entry.writes_outside = True
        else:
            entry.launches = True


def lowering_found(interp) -> None:
    """The kernel made (or reported again) lowering-time findings, which its settling may drop or
    make possible (interp_records.settle_lowering_findings) after the calls holding the launch
    captured them: those calls, stored since `not_replayable` spares them, are not memoised after
    all."""
    for entry in getattr(interp, "captures", ()):
        if entry.launches:
            entry.writes_outside = True


def _push(interp, scope: Scope) -> Scope:
    not_replayable(interp)
    if not interp.certain:
        scope.own_bytes = 0
        scope.own_barriers = Counter()
        scope.complete = scope.tmem = False
    _stack(interp).append(scope)
    return scope


def reduction(interp, jnp_name: str, span) -> None:
    """`jnp.<jnp_name>` reduces an array in the kernel: if the installed JAX reserves reduction
    scratch for its primitive, the current scope needs at least that much (as an inner scope)."""
    stack = _stack(interp)
    if not stack:
        return
    scope = stack[-1]
    if not jax_source.reduction_scratch_known():
        scope.complete = False  # the JAX's estimator was not read: it may reserve some
        return
    if jax_source.reduction_scratch_primitive(jnp_name) is None:
        return
    not_replayable(interp)
    n = stack[0].reduction_bytes
    if n is None or not interp.certain:  # how much, or whether it is traced at all: unknown
        scope.complete = False
        return
    if n > scope.inner_bytes:
        scope.inner_parts = [f"reduction scratch: {n:,} B"]
        scope.inner_causes = [(span, "reduction scratch", n)] if span is not None else []
    scope.inner_bytes = max(scope.inner_bytes, n)


def reduction_bytes_of(params: Value | None) -> int | None:
    """The `reduction_scratch_bytes` of a kernel's compiler params (the installed default when
    not given); None when not known."""
    if params is None or (isinstance(params, Const) and params.value is None):
        return jax_source.reduction_scratch_default_bytes()
    if isinstance(params, Wrapped) and params.api == "plgpu.CompilerParams" and "?" not in params.kwargs:
        given = params.kwargs.get("reduction_scratch_bytes")
        return jax_source.reduction_scratch_default_bytes() if given is None else as_int(given)
    return None


def enter_pipeline(interp, scope: Scope) -> Scope | None:
    """A pipeline's own `run_scoped` starts, with the allocations already in `scope`."""
    if not _stack(interp):
        return None
    return _push(interp, scope)


def leave(interp, scope: Scope | None) -> None:
    """A `run_scoped` ends: it runs after its siblings (the maximum), inside its parent (a sum)."""
    if scope is None:
        return
    stack = _stack(interp)
    if not stack or stack[-1] is not scope:
        return
    stack.pop()
    if stack:
        parent = stack[-1]
        b, bar = scope.total()
        if b > parent.inner_bytes:
            parent.inner_parts = scope.parts + scope.inner_parts
            parent.inner_causes = scope.causes + scope.inner_causes
        parent.inner_bytes = max(parent.inner_bytes, b)
        parent.inner_barriers, sure = merge_barriers(parent.inner_barriers, bar)
        parent.complete = parent.complete and scope.complete and sure
        parent.tmem = parent.tmem or scope.tmem


def _may_equal(a: BarrierKey, b: BarrierKey) -> bool:
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def merge_barriers(earlier: Counter, later: Counter) -> tuple[Counter, bool]:
    """`earlier | later` (sibling scopes: the larger count of each kind), and whether that is
    JAX's count: not when a kind of one may or may not be a kind of the other (a field not
    known, None, on either side)."""
    sure = not any(_may_equal(a, b) and (a != b or None in a)
                   for a in earlier for b in later)
    return earlier | later, sure


def pallas_call_pipeline(scope: Scope, refs: list[Value], n_buffers: int, params: Value | None,
                         grid: Value | None) -> None:
    """What `lower_pipelined_jaxpr_to_module` allocates around a pallas_call kernel: its
    `emit_pipeline` buffers (SMEM in/out blocks x steps) and their barrier."""
    steps = _pipeline_steps(params, grid)
    if steps is None:
        scope.complete = False
        steps = 1  # at least one buffer each
    smem_inputs = 0
    for i, ref in enumerate(refs[:n_buffers]):
        if not isinstance(ref, RefVal):
            scope.complete = False
            continue
        if ref.space not in ("smem", "default"):
            if ref.space is None or ref.space == "?":
                scope.complete = False
            continue
        scope.add_buffer(ref.inner, f"{ref.origin_desc or f'buffer {i}'}: {ref.inner.aval()} x {steps}", steps,
                         ref.spec_span or ref.origin)
        if not ref.origin_desc.startswith("pallas_call output"):
            smem_inputs += 1
    if smem_inputs:
        scope.add_barrier("barrier", smem_inputs, steps, what=f"pipeline barriers x {steps}")


def _pipeline_steps(params: Value | None, grid: Value | None) -> int | None:
    """`max_concurrent_steps` (default 1), clamped to the number of sequential grid steps
    (`dimension_semantics` not "parallel"; all parallel by default)."""
    kwargs: dict[str, Value] = {}
    if isinstance(params, Wrapped) and params.api == "plgpu.CompilerParams":
        if "?" in params.kwargs:
            return None
        kwargs = params.kwargs
    elif not (params is None or (isinstance(params, Const) and params.value is None)):
        return None
    mcs = as_int(kwargs.get("max_concurrent_steps", Const(1)))
    if mcs is None:
        return None
    sem = kwargs.get("dimension_semantics", Const(None))
    if isinstance(sem, Const) and sem.value is None:
        return min(mcs, 1)
    grid_dims: list[int | None]
    if isinstance(grid, TupleVal):
        grid_dims = [as_int(g) for g in grid.items]
    elif grid is not None and as_int(grid) is not None:
        grid_dims = [as_int(grid)]
    else:
        return None
    if not isinstance(sem, TupleVal) or len(sem.items) != len(grid_dims):
        return None
    steps = 1
    for s, g in zip(sem.items, grid_dims):
        if not isinstance(s, Const) or not isinstance(s.value, str):
            return None
        if s.value != "parallel":
            if g is None:
                return None
            steps *= g
    return min(mcs, steps)


@dataclass(frozen=True)
class KernelSmem:
    """The shared memory of one kernel call, for hovers and the limit check."""

    smem_bytes: int  # what JAX compares with the limit (scratch aligned, plus barriers)
    complete: bool  # every allocation sized (else a lower bound)
    parts: tuple[str, ...]

    def describe(self) -> str:
        amount = f"{self.smem_bytes:,} bytes" if self.complete else f"at least {self.smem_bytes:,} bytes"
        return f"Shared memory: {amount} of {MAX_SMEM_BYTES:,} (sm_90)"


def start_kernel(interp) -> Scope:
    scope = Scope()
    interp.kernel.smem_scopes = [scope]
    interp.kernel.born = next_born()
    return scope


def finish_kernel(interp, root: Scope, span, blame_line: int) -> None:
    """The kernel body ran: record its shared memory and check it against the limit."""
    from wgmma_lsp.rules import smem_budget

    b, bar = root.total()
    total = align(b) + barrier_bytes(bar) + (4 if root.tmem else 0)  # _smem_tree_size: scratch, barriers, TMEM address
    usage = KernelSmem(total, root.complete, tuple(root.parts + root.inner_parts))
    if span is not None and getattr(interp, "hover_only", False) is False:
        per_span = interp.smem_usage.setdefault(span, [])
        if usage not in per_span:
            per_span.append(usage)
    if total > MAX_SMEM_BYTES and span is not None:
        causes = sorted(root.causes + root.inner_causes, key=lambda c: -c[2])[:MAX_RELATED]
        # JAX checks the total while launching the lowered kernel: no line of it in the traceback
        related = [kernel_level_note(span)] + [
            Related(c_span, f"allocates {what}: {size:,} bytes of shared memory")
            for c_span, what, size in causes if c_span != span]
        interp.report(smem_budget.RULE, limit_message(total, root.complete), span, blame_line,
                      related=related,
                      data={"smem_bytes": total, "complete": root.complete, "parts": list(usage.parts)})


MAX_RELATED = 4  # the largest allocations shown as related locations


def limit_message(total: int, complete: bool) -> str:
    """JAX's own message (core.py `_launch`) when the total is JAX's; our own words when it is
    only a lower bound (some allocation could not be sized): JAX's number would be larger."""
    if complete:
        return (f"Mosaic GPU kernel exceeds available shared memory: smem_bytes={total} > "
                f"max_smem_bytes={MAX_SMEM_BYTES}")
    return (f"This kernel allocates at least {total:,} bytes of shared memory, which exceeds the "
            f"{MAX_SMEM_BYTES:,} bytes available on sm_90 (some allocations could not be sized, so "
            "JAX's smem_bytes is larger; JAX: \"Mosaic GPU kernel exceeds available shared memory\")")

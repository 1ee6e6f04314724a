"""The shared memory a Mosaic GPU kernel allocates, as JAX 0.10 counts it.

Mirrors `Resources` and the resource estimators in `jax/_src/pallas/mosaic_gpu/lowering.py`
(each `run_scoped` allocation is rounded up to `SMEM_ALIGNMENT` = 1024 bytes; allocations of one
scope add up, nested scopes add to their parent, scopes one after another take the maximum) and
`_smem_tree_size` / `_launch` in `jax/experimental/mosaic/gpu/core.py` (the scratch bytes, then
8 bytes per mbarrier, compared with the device limit: 227 KiB = 232,448 bytes on sm_90 when no
GPU is present).

A `pallas_call` adds its pipeline: `run_scoped` of the `scratch_shapes`, inside it
`emit_pipeline`'s SMEM buffers (block bytes x `max_concurrent_steps`, clamped to the number of
sequential grid steps) and one barrier per step when any input is in SMEM.

Only allocations on every path are counted (those under an undecided Python branch are not), and
allocations wgmma-lsp cannot size count as zero: the total is a lower bound of JAX's, so a total
over the limit is a proven error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.dtypes import itemsize_bits
from wgmma_lsp.interpret.values import AllocSpec, ArrayVal, Const, RefVal, TupleVal, Value, Wrapped, as_int

SMEM_ALIGNMENT = 1024
MBARRIER_BYTES = 8
MAX_SMEM_BYTES = 227 * 1024  # sm_90 and sm_100, when JAX cannot ask a device


def align(n: int) -> int:
    return (n + SMEM_ALIGNMENT - 1) // SMEM_ALIGNMENT * SMEM_ALIGNMENT


@dataclass
class Scope:
    """One `run_scoped` (or the kernel): what it allocates itself, and the largest of the
    scopes it runs one after another."""

    own_bytes: int = 0
    own_barriers: int = 0
    inner_bytes: int = 0
    inner_barriers: int = 0
    complete: bool = True
    parts: list[str] = field(default_factory=list)
    inner_parts: list[str] = field(default_factory=list)  # those of the largest inner scope
    tmem: bool = False  # allocates tensor memory: its address takes 4 bytes of SMEM

    def total(self) -> tuple[int, int]:
        return self.own_bytes + self.inner_bytes, self.own_barriers + self.inner_barriers


def _array_bytes(a: ArrayVal) -> int | None:
    if a.shape is None or T.concrete(a.dtype) is None or not all(isinstance(d, int) for d in a.shape):
        return None
    try:
        bits = itemsize_bits(a.dtype)
    except ValueError:
        return None
    return math.prod(a.shape) * bits // 8  # type: ignore[arg-type]


def _stack(interp) -> list[Scope]:
    stack = getattr(interp, "smem_scopes", None)
    if stack is None:
        stack = interp.smem_scopes = []
    return stack


def add_allocation(scope: Scope, spec: Value, multiplier: int = 1, what: str = "") -> None:
    """Count one allocation (`plgpu.SMEM`, `plgpu.Barrier`, a pytree of them) in `scope`."""
    if isinstance(spec, TupleVal):
        for item in spec.items:
            add_allocation(scope, item, multiplier, what)
        return
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
        scope.own_barriers += MBARRIER_BYTES * math.prod(shape)  # type: ignore[arg-type]
        return
    if spec.kind != "smem":
        scope.complete = False
        return
    n = _array_bytes(spec.inner)
    if n is None:
        scope.complete = False
        return
    scope.own_bytes += align(n * multiplier)
    scope.parts.append(f"{what or spec.describe()}: {align(n * multiplier):,} B")


def unsized(interp) -> None:
    """Something allocates SMEM that is not counted (an `emit_pipeline`'s buffers): the kernel's
    total becomes a lower bound."""
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
    if not interp.certain:
        scope.own_bytes = scope.own_barriers = 0
        scope.complete = scope.tmem = False
    stack.append(scope)
    return scope


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
        parent.inner_bytes = max(parent.inner_bytes, b)
        parent.inner_barriers = max(parent.inner_barriers, bar)
        parent.complete = parent.complete and scope.complete
        parent.tmem = parent.tmem or scope.tmem


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
        n = _array_bytes(ref.inner)
        if n is None:
            scope.complete = False
            continue
        scope.own_bytes += align(n * steps)
        scope.parts.append(f"{ref.origin_desc or f'buffer {i}'}: {ref.inner.aval()} x {steps}: {align(n * steps):,} B")
        if not ref.origin_desc.startswith("pallas_call output"):
            smem_inputs += 1
    if smem_inputs:
        scope.own_barriers += MBARRIER_BYTES * steps


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
    interp.smem_scopes = [scope]
    return scope


def finish_kernel(interp, root: Scope, saved: list[Scope] | None, span, blame_line: int) -> None:
    """The kernel body ran: record its shared memory and check it against the limit."""
    from wgmma_lsp.rules import smem_budget

    interp.smem_scopes = saved if saved is not None else []
    b, bar = root.total()
    total = align(b) + bar + (4 if root.tmem else 0)  # _smem_tree_size: scratch, barriers, TMEM address
    usage = KernelSmem(total, root.complete, tuple(root.parts + root.inner_parts))
    if span is not None and getattr(interp, "hover_only", False) is False:
        per_span = interp.smem_usage.setdefault(span, [])
        if usage not in per_span:
            per_span.append(usage)
    if total > MAX_SMEM_BYTES and span is not None:
        interp.report(smem_budget.RULE,
                      f"Mosaic GPU kernel exceeds available shared memory: smem_bytes={total} > "
                      f"max_smem_bytes={MAX_SMEM_BYTES}", span, blame_line,
                      data={"smem_bytes": total, "parts": list(usage.parts)})

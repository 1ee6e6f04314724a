"""TMA copies and barrier operations: the memory spaces their refs must be in.

Mirrors, in JAX's order of checks (jax 0.10.2):
- `jax._src.pallas.mosaic_gpu.primitives.copy_gmem_to_smem` (the `leader_tracked` check), then the
  abstract evals of `copy_gmem_to_smem_p` (src GMEM, dst SMEM, barrier SMEM) and
  `copy_smem_to_gmem_p` (src SMEM, dst GMEM), `barrier_arrive_p` and `barrier_wait_p` (barrier
  SMEM), all through `_check_ref`, where a ref without a memory space (or `DEFAULT`) counts as GMEM.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Const, RefVal, Value, is_unknown
from wgmma_lsp.models import barrier_index
from wgmma_lsp.models.cluster_axes import check_names
from wgmma_lsp.models.registry import model
from wgmma_lsp.models.copy_checks import check_copy_trace
from wgmma_lsp.models.tma_lowering import check_copy_lowering
from wgmma_lsp.rules import copy_leader_tracked, ref_memory_space
from wgmma_lsp.rules.base import Related

# How `_check_ref` sees each memory space the interpreter tracks ("default": pallas_call blocks
# without a memory space; barriers are SMEM allocations).
_AS_CHECKED = {"smem": "smem", "gmem": "gmem", "default": "gmem", "any": "any", "tmem": "tmem",
               "barrier": "smem"}


def _checked_space(ref: RefVal) -> str | None:
    return _AS_CHECKED.get(ref.root().space or "")


def check_ref(call: Call, i: int, name: str, space: str) -> bool | None:
    """`_check_ref(aval, name, memory_space)`: True if it passes, False if JAX raises here (and
    it is reported), None if undecided."""
    ref = call.get(i, name)
    if not isinstance(ref, RefVal):
        return None
    got = _checked_space(ref)
    if got is None:
        return None
    if got == space:
        return True
    root = ref.root()
    # Only plain refs with a known aval: JAX prints the aval, and we print it the same way.
    if root.kind != "plain" or root.shape is None or T.concrete(root.dtype) is None \
            or any(not isinstance(d, int) for d in root.shape):
        return None
    related = [Related(root.origin, f"allocated here ({root.origin_desc}) as {root.aval()}")] \
        if root.origin is not None else []
    call.interp.report(ref_memory_space.RULE,
                       f"{name} must be a {space.upper()} reference, got {root.aval()}",
                       call.span_of(i, name), call.line, related=related)
    return False


def _checks(call: Call, refs: list[tuple[int, str, str]]) -> bool:
    """True when every check passes."""
    for i, name, space in refs:
        if check_ref(call, i, name, space) is not True:
            return False  # JAX raises at the first failing check; undecided ones stop us too
    return True


@model("plgpu.copy_gmem_to_smem")
def _copy_gmem_to_smem(call: Call) -> Value:
    leader = call.kwargs.get("leader_tracked")
    axes = call.kwargs.get("collective_axes", Const(None) if call.complete else None)
    if leader is not None and not (isinstance(leader, Const) and leader.value is None):
        if is_unknown(leader):
            return Const(None)  # may be None
        if isinstance(axes, Const) and axes.value is None:
            call.interp.report(copy_leader_tracked.RULE, copy_leader_tracked.MESSAGE,
                               call.span_of(99, "leader_tracked"), call.line)
            return Const(None)
        if axes is None:
            return Const(None)
    elif leader is None and not call.complete:
        return Const(None)
    if _checks(call, [(0, "src", "gmem"), (1, "dst", "smem"), (2, "barrier", "smem")]) \
            and check_copy_trace(call, gmem_to_smem=True):
        # The collective axes are resolved first (WG117); a `leader_tracked` partition sizes them
        # while tracing already, not modelled.
        if _none(leader) and axes is not None and check_names(call, axes, "collective_axes"):
            return Const(None)
        # the barrier is used (WG119) after the byte count, before the copy's own checks
        check_copy_lowering(call, gmem_to_smem=True,
                            barrier=lambda: barrier_index.check(call, call.get(2, "barrier"), 2, "barrier"))
    return Const(None)


def _none(v: Value | None) -> bool:
    """A keyword not given, or given as None."""
    return v is None or (isinstance(v, Const) and v.value is None)


@model("plgpu.async_prefetch")
def _async_prefetch(call: Call) -> Value:
    """`async_prefetch(ref, *, collective_axes=None, leader_tracked=None, predicate=None)`: its
    lowering resolves the collective axes to cluster dimensions (WG117), for a GMEM ref."""
    ref = call.get(0, "ref")
    if isinstance(ref, RefVal) and _checked_space(ref) == "gmem" and _none(call.kwargs.get("leader_tracked")):
        check_names(call, call.kwargs.get("collective_axes", Const(None)), "collective_axes")
    return Const(None)


@model("plgpu.copy_smem_to_gmem")
def _copy_smem_to_gmem(call: Call) -> Value:
    if _checks(call, [(0, "src", "smem"), (1, "dst", "gmem")]) and check_copy_trace(call, gmem_to_smem=False):
        check_copy_lowering(call, gmem_to_smem=False)
    return Const(None)


@model("plgpu.barrier_arrive", "plgpu.barrier_wait")
def _barrier_op(call: Call) -> Value:
    if _checks(call, [(0, "barrier", "smem")]):
        barrier_index.check(call, call.get(0, "barrier"), 0, "barrier")
    return Const(None)

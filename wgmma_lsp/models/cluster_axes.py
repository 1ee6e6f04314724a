"""WG117: a collective operation names a cluster axis the kernel does not have.

Mosaic GPU's lowering resolves every collective axis an operation names to a dimension of the
kernel's cluster (`_resolve_cluster_axis` in jax/_src/pallas/mosaic_gpu/lowering.py, the same in
0.10.2, 0.12.0.1 and 0.12.1): a name that is not one of the `plgpu.kernel`'s `cluster_names` —
a grid or thread axis, a typo, an axis of a kernel without a cluster — raises `LookupError:
Unknown cluster axis {name}, available axes: [...]` (the names as the lowering holds them: last
first). Tracing does not check these names. Mirrored for:

- `plgpu.copy_gmem_to_smem(..., collective_axes=)` (`_copy_gmem_to_smem_lowering`), without a
  `leader_tracked` partition (whose abstract evaluation sizes the axes while tracing);
- `plgpu.async_prefetch(..., collective_axes=)` (`_async_prefetch_lowering`);
- `plgpu.tcgen05_mma(..., collective_axis=)` (`_collective_mma_predicate`);
- `plgpu.ClusterBarrier(collective_axes)` allocated by `pl.run_scoped` or as a kernel's scratch
  (`_get_cluster_barrier`, called by `_estimate_resources` before the kernel's body is lowered:
  no line of the kernel is in JAX's traceback, which blames the kernel's call).

Claimed only in a `plgpu.kernel` whose cluster names are constants, under a lowering semantics
JAX lowers with, for names that are constants.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import AllocSpec, Value
from wgmma_lsp.models.axis_names import names_of
from wgmma_lsp.rules import unknown_cluster_axis
from wgmma_lsp.rules.base import kernel_level_note

#: The JAX versions whose lowering is mirrored (checked against 0.10.2, 0.12.0.1 and 0.12.1).
MIRRORED = ((0, 10), (0, 12))


def _missing(interp, names: tuple[str, ...] | None) -> tuple[str, tuple[str, ...]] | None:
    """The first of `names` the kernel's cluster lacks, and the cluster's names; None if none
    is surely missing."""
    cluster = interp.kernel.cluster_axes
    if names is None or cluster is None or interp.kernel.lowering not in ("lane", "warpgroup") \
            or installed() is None or installed()[:2] not in MIRRORED:
        return None
    missing = next((n for n in names if n not in cluster), None)
    return None if missing is None else (missing, cluster)


def check_names(call: Call, value: Value, name: str) -> bool:
    """An operation's `name=` collective axes (a name or a tuple of names): reported, True, when
    the lowering raises at this call."""
    found = _missing(call.interp, names_of(value))
    if found is None:
        return False
    call.interp.report(unknown_cluster_axis.RULE, unknown_cluster_axis.message(*found),
                       call.span_of(99, name), call.line)
    return True


def check_cluster_barriers(call: Call, allocations: list[tuple[Value, object]]) -> None:
    """`pl.run_scoped`'s allocations (a kernel's scratch too): a `plgpu.ClusterBarrier` over an
    axis the cluster lacks fails while the kernel's resources are counted, before its body is
    lowered — blamed at the kernel's call."""
    interp = call.interp
    ks = interp.kernel.span
    if ks is None:
        return
    for spec, span in allocations:
        if not isinstance(spec, AllocSpec) or spec.kind != "barrier":
            continue
        found = _missing(interp, spec.cluster_axes)
        if found is None:
            continue
        interp.report(unknown_cluster_axis.RULE, unknown_cluster_axis.message(*found),
                      spec.span or span, ks.line,  # type: ignore[arg-type]
                      related=[kernel_level_note(ks)])
        return

"""The kernel being interpreted, as one object: `KernelState`.

The interpreter (the models' `ModelHost`) owns one: `host.kernel`. Outside any kernel it is a
state with nothing known (`outside_kernel()`); `models/pallas.py` puts a new one in place for
each `pl.pallas_call` / `plgpu.kernel` body it runs and the previous one back after it.

What a call inside a kernel computes and reports depends on this state (the lowering rules
need the semantics, kernel-level errors are blamed at the kernel's call, run_scoped checks read
the thread axis): the memo key of a call is derived from it (`memo_key`), so a helper shared by
two kernels is analysed again in the second one instead of replaying what the first found, with
the first kernel's semantics and blame.

A leaf module: it imports nothing of the interpreter or the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:  # pragma: no cover - types only
    from typing import Any
    from wgmma_lsp.spans import Span

#: `wg_axis` when it is not known whether the kernel has a thread axis.
UNKNOWN_AXIS = "?"


@dataclass(eq=False)
class KernelState:
    """The `pallas_call`/`plgpu.kernel` whose body runs now."""

    # The lowering semantics ("lane", "warpgroup"), None when unknown (no visible kernel call,
    # an unknown JAX, a kernel run in interpret mode): lowering rules need it.
    lowering: str | None = None
    # The kernel's call: kernel-level lowering errors (no kernel frame in JAX's traceback) are
    # blamed there. None outside a kernel.
    span: "Span | None" = None
    # Its thread axis (`plgpu.kernel(..., thread_name=...)`): None for single-threaded kernels
    # (pallas_call), UNKNOWN_AXIS when unknown.
    wg_axis: str | None = UNKNOWN_AXIS
    # The cluster axis names its lowering knows (`_AxisNames.cluster`, reversed as the lowering
    # reverses them): a `plgpu.kernel`'s `cluster_names`. None when unknown (pallas_call too).
    cluster_axes: tuple[str, ...] | None = None
    # The `pl.run_scoped` scopes open in it, outermost first (models/smem_budget.Scope).
    smem_scopes: list[Any] = field(default_factory=list)
    # A serial number taken when the body started (interpret/values.next_born; 0: no kernel
    # runs): the memoised calls it predates contain the whole launch (models/smem_budget.py).
    born: int = 0
    # The lowering rules a certain error of which this body already reported, with the serial
    # number of that report (`interp.report_serial`): JAX's lowering stops at the first, so a
    # later instance of the same check is never made (interpret/followon.py).
    lowered: dict[str, int] = field(default_factory=dict)
    # Lowering findings made before this body and reported again in it: (finding, whether it
    # was certain before, the context the report added or a marker), undone when tracing the
    # body fails (interp_records.settle_lowering_findings).
    counted: list[tuple[Any, bool, Any]] = field(default_factory=list)

    @property
    def inside(self) -> bool:
        """A kernel's body runs (not module code or a host-side function)."""
        return self.span is not None

    def memo_key(self) -> tuple:
        """What a memoised call's result and findings may depend on, of this state."""
        return (self.lowering, self.span, self.wg_axis, self.cluster_axes)


def outside_kernel() -> KernelState:
    """The state of code that runs outside any kernel body."""
    return KernelState()

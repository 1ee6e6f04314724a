"""Memory spaces as the Mosaic GPU lowering sees them, where they differ from the traced aval."""

from __future__ import annotations

from wgmma_lsp.interpret.values import RefVal


def lowered_space(ref: RefVal) -> str | None:
    """The memory space the Mosaic GPU lowering sees for a ref. A `pl.pallas_call` block whose
    BlockSpec names no memory space traces as `Ref<default>` (its aval, printed in trace-time
    messages), but the lowering runs the kernel over the SMEM buffers of an `emit_pipeline`
    (jax 0.10.2 lowering.py `lower_pipelined_jaxpr_to_module`; pipeline.py `_in_smem`: memory
    space None, DEFAULT or SMEM), which carry the spec's transforms."""
    return "smem" if ref.space == "default" else ref.space

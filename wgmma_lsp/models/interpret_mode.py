"""Interpret mode: a kernel given `interpret=` parameters is run on the CPU, never lowered.

Mirrors `jax/_src/pallas/pallas_call.py: _pallas_call_lowering` (0.10.2 and 0.12.0.1): `if
interpret:` the call is lowered as the HLO interpreter (`interpret=True`), the TPU interpreter
(`InterpretParams`) or the Mosaic GPU interpreter (`InterpretGPUParams`: `plgpu.InterpretGPUParams`
in 0.12, `jax._src.pallas.mosaic_gpu.interpret.params.InterpretGPUParams` in both), and the
Mosaic GPU lowering never sees the kernel. `plgpu.kernel(..., interpret=...)` hands it to the
`pallas_call` it builds (mosaic_gpu/core.py `kernel` -> `core_map` -> `pallas_call`).

The kernel is still traced, so trace-time checks apply; no lowering-time check does. An
`interpret` whose value is not known may or may not lower the kernel: lowering-time findings are
then possible, not certain.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Const, Value, Wrapped
from wgmma_lsp.models.registry import model

#: The interpreter parameter classes of each supported JAX, by canonical name (every import
#: spelling: `plgpu.` is `jax.experimental.pallas.mosaic_gpu`, `plgpu_private.` and
#: `pl_private.` the private `jax._src.pallas...` paths).
PARAMS_CLASSES = (
    "plgpu.InterpretGPUParams",
    "plgpu_private.interpret.params.InterpretGPUParams",
    "pltpu.InterpretParams",
    "pl_private.mosaic.interpret.params.InterpretParams",
)


@model(*PARAMS_CLASSES)
def _interpret_params(call: Call) -> Value:
    """`InterpretGPUParams(...)` / `InterpretParams(...)`: a dataclass instance (always true)."""
    return Wrapped("interpret_params", Const(None), dict(call.kwargs), call.span)


def interpreted(kwargs: dict[str, Value]) -> bool | None:
    """Whether a `pallas_call`/`plgpu.kernel` with these keyword arguments runs in interpret
    mode: False when `interpret` is absent, None or false (the kernel is lowered), True when it
    is true or an interpreter's parameters, None when its value is not known."""
    if "?" in kwargs:  # keywords not all known (`**options`)
        return None
    v = kwargs.get("interpret")
    if v is None:
        return False
    if isinstance(v, Wrapped) and v.api == "interpret_params":
        return True
    if isinstance(v, Const) and (v.value is None or isinstance(v.value, (bool, int))):
        return bool(v.value)
    return None

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

Interpret mode may also be forced around the call: `with force_gpu_interpret_mode(params):`
(`force_tpu_interpret_mode`), or `set_gpu_interpret_mode(params)` (`set_tpu_interpret_mode`) for
good — JAX's own tests run kernels on the CPU so. The call then reads `forced or interpret`
(interpret/forced_interpret.py).
"""

from __future__ import annotations

from wgmma_lsp.interpret import forced_interpret
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Const, Value, Wrapped
from wgmma_lsp.models.registry import method, model, with_state

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager

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


#: The context managers that force interpret mode for their block, and the functions that force
#: it for good (`params=InterpretGPUParams()` by default), by canonical name (0.12 exports the GPU
#: ones from `plgpu` too).
FORCE_FOR_BLOCK = (
    "plgpu_private.interpret.params.force_gpu_interpret_mode",
    "plgpu.force_gpu_interpret_mode",
    "pl_private.mosaic.interpret.interpret_pallas_call.force_tpu_interpret_mode",
    "pltpu.force_tpu_interpret_mode",
)
FORCE_FOR_GOOD = (
    "plgpu_private.interpret.params.set_gpu_interpret_mode",
    "plgpu.set_gpu_interpret_mode",
    "pl_private.mosaic.interpret.interpret_pallas_call.set_tpu_interpret_mode",
    "pltpu.set_tpu_interpret_mode",
)
FORCED = "interpret_mode_forced"


def _forces(call: Call) -> bool | None:
    """Whether the call's `params` force interpret mode: its default (an interpreter's
    parameters) and any such parameters do, `None` does not; anything else is not known."""
    if "?" in call.kwargs:  # keywords not all known (`**options`)
        return None
    if not call.args and "params" not in call.kwargs:
        return True
    return interpreted({"interpret": call.get(0, "params")})


@model(*FORCE_FOR_BLOCK)
def _force_for_block(call: Call) -> Value:
    """`force_gpu_interpret_mode(params)`: a context manager; its `with` block runs forced."""
    return Wrapped(FORCED, Const(_forces(call)), {}, call.span)


@method(f"wrapped:{FORCED}.__enter__")
def _enter(v: Value, call: Call) -> Value:
    """`with force_gpu_interpret_mode() as x:` binds None (the context manager yields nothing)."""
    return Const(None)


@with_state(f"wrapped:{FORCED}")
def _block(v: Value) -> AbstractContextManager[None]:
    """The `with` block's state: forced, or not known (parameters not known)."""
    state = v.func.value if isinstance(v, Wrapped) and isinstance(v.func, Const) else None
    return forced_interpret.forced(state)


@model(*FORCE_FOR_GOOD)
def _force_for_good(call: Call) -> Value:
    """`set_gpu_interpret_mode(params)`: forced from here on (on a path that may not run: not
    known from here on)."""
    state = _forces(call)
    if not call.interp.certain and state != forced_interpret.current():
        state = None  # (either state, from here on)
    forced_interpret.set_for_good(state)
    call.interp.not_replayable()  # (a replay of a call around it would not set it again)
    return Const(None)


def interpreted_here(kwargs: dict[str, Value]) -> bool | None:
    """`interpreted(kwargs)` where the kernel is traced: JAX reads `forced or interpret`."""
    forced = forced_interpret.current()
    if forced is True:
        return True
    mode = interpreted(kwargs)
    if forced is None and mode is not True:
        return None
    return mode


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

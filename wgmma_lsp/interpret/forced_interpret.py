"""Whether JAX's interpret mode is forced where the interpreter runs now.

`force_gpu_interpret_mode(params)` (and `force_tpu_interpret_mode`) set the config state
`pallas_tpu_interpret_mode_context_manager` for their `with` block; `set_gpu_interpret_mode`
(`set_tpu_interpret_mode`) sets it for good. Every `pallas_call`, `core_map` and `plgpu.kernel`
traced meanwhile reads it first: `interpret = config.pallas_tpu_interpret_mode_context_manager.value
or interpret` (jax/_src/pallas/pallas_call.py and core.py, 0.10.2 and 0.12.x) — the kernel then
runs on the CPU interpreter and the Mosaic GPU lowering never sees it (models/interpret_mode.py).

Here the state is True (forced: interpreter parameters given), False (not forced, as when an
analysis starts: the state's default is None in JAX) or None (not known: parameters the analysis
cannot see, or set on a path that may not run). A leaf module: it imports nothing of the
interpreter or the models.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

FORCED: ContextVar[bool | None] = ContextVar("forced_interpret", default=False)


def current() -> bool | None:
    """True: interpret mode is forced here; False: it is not; None: not known."""
    return FORCED.get()


@contextmanager
def forced(state: bool | None) -> Iterator[None]:
    """Run with the state `state` (a `with force_gpu_interpret_mode(...)` block; an analysis
    starts with False)."""
    token = FORCED.set(state)
    try:
        yield
    finally:
        FORCED.reset(token)


def set_for_good(state: bool | None) -> None:
    """`set_gpu_interpret_mode(...)`: the state from here on (until the enclosing `forced`
    ends: each analysis runs inside one, so nothing outlives it)."""
    FORCED.set(state)

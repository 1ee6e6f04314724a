"""Checks of `pl.pallas_call`'s block specs made while JAX turns them into block mappings, before
the kernel is traced: WG097.

Mirrors jax/_src/pallas/mosaic_gpu/core.py `BlockSpec.to_block_mapping` (0.10.2, 0.12.0.1): a
`plgpu.BlockSpec` with non-empty `collective_axes` raises "collective_axes is not supported in
pallas_call. …" for any pallas_call (with or without Mosaic GPU compiler params), blamed on the
call; nothing after it runs (the kernel is never traced).
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, BlockSpecVal, TupleVal, Value, Wrapped
from wgmma_lsp.models import pallas  # noqa: F401 - its pallas_call model is wrapped below
from wgmma_lsp.models.registry import MODELS
from wgmma_lsp.rules import pallas_call_collective_axes


def _specs(v: Value | None) -> list[Value]:
    if isinstance(v, TupleVal):
        return list(v.items)
    return [v] if v is not None else []


def collective_spec(wrapped: Wrapped) -> BlockSpecVal | None:
    """The first in/out spec of the pallas_call known to have collective axes."""
    kw = wrapped.kwargs
    if "grid_spec" in kw:
        return None
    for s in _specs(kw.get("in_specs")) + _specs(kw.get("out_specs")):
        if isinstance(s, BlockSpecVal) and s.collective_axes is True:
            return s
    return None


def _wrap() -> None:
    original = MODELS["pl.pallas_call()"]

    def wrapped(call: Call) -> Value:
        w = call.wrapped
        if isinstance(w, Wrapped) and call.complete and collective_spec(w) is not None:
            call.interp.report(pallas_call_collective_axes.RULE, pallas_call_collective_axes.MESSAGE,
                               call.span, call.line)
            return UNKNOWN  # JAX raises here: the kernel is not traced
        return original(call)

    MODELS["pl.pallas_call()"] = wrapped


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 25


def install() -> None:
    """Extend the pallas_call model (called once by `registry.load_all`, after every model module
    was imported: importing this module changes no table)."""
    _wrap()

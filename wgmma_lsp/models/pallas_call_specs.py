"""Checks of `pl.pallas_call`'s block specs made while JAX turns them into block mappings, before
the kernel is traced: WG097, WG109.

Mirrors jax/_src/pallas/mosaic_gpu/core.py `BlockSpec.to_block_mapping` (0.10.2, 0.12.0.1,
0.12.1): a `plgpu.BlockSpec` with non-empty `collective_axes` raises "collective_axes is not
supported in pallas_call. …" for any pallas_call (with or without Mosaic GPU compiler params); in
0.12.1 and later, one with non-empty `transforms` then fails `assert not self.transforms`. Both are
blamed on the call; nothing after them runs (the kernel is never traced).
"""

from __future__ import annotations


from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.interpret.values import UNKNOWN, BlockSpecVal, TupleVal, Value, Wrapped
from wgmma_lsp.models import pallas  # noqa: F401 - its pallas_call model is wrapped below
from wgmma_lsp.models.registry import MODELS
from wgmma_lsp.rules import pallas_call_collective_axes, pallas_call_spec_transforms

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable

#: The JAX versions whose `plgpu.BlockSpec.to_block_mapping` asserts that a spec has no transforms.
_NO_TRANSFORMS = ">=0.12.1"


def _specs(v: Value | None) -> list[Value]:
    if isinstance(v, TupleVal):
        return list(v.items)
    return [v] if v is not None else []


def _first_spec(wrapped: Wrapped, known: Callable[[BlockSpecVal], bool]) -> BlockSpecVal | None:
    """The first in/out spec of the pallas_call for which `known` holds (none with `grid_spec=`,
    whose specs are not followed)."""
    kw = wrapped.kwargs
    if "grid_spec" in kw:
        return None
    return next((s for s in _specs(kw.get("in_specs")) + _specs(kw.get("out_specs"))
                 if isinstance(s, BlockSpecVal) and known(s)), None)


def collective_spec(wrapped: Wrapped) -> BlockSpecVal | None:
    """The first in/out spec of the pallas_call known to have collective axes."""
    return _first_spec(wrapped, lambda s: s.collective_axes is True)


def transformed_spec(wrapped: Wrapped) -> BlockSpecVal | None:
    """The first in/out spec of the pallas_call known to have transforms: one the BlockSpec model
    recognised (it stands an unknown `transforms=` value in as one "unknown" transform)."""
    return _first_spec(wrapped, lambda s: any(t.kind != "unknown" for t in s.transforms))


def _wrap() -> None:
    original = MODELS["pl.pallas_call()"]

    def wrapped(call: Call) -> Value:
        w = call.wrapped
        if isinstance(w, Wrapped) and call.complete and collective_spec(w) is not None:
            call.interp.report(pallas_call_collective_axes.RULE, pallas_call_collective_axes.MESSAGE,
                               call.span, call.line)
            return UNKNOWN  # JAX raises here: the kernel is not traced
        if isinstance(w, Wrapped) and call.complete and matches(_NO_TRANSFORMS):
            spec = transformed_spec(w)
            if spec is not None:
                call.interp.report(pallas_call_spec_transforms.RULE, pallas_call_spec_transforms.MESSAGE,
                                   call.span, call.line)
                return UNKNOWN
        return original(call)

    MODELS["pl.pallas_call()"] = wrapped


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 25


def install() -> None:
    """Extend the pallas_call model (called once by `registry.load_all`, after every model module
    was imported: importing this module changes no table)."""
    _wrap()

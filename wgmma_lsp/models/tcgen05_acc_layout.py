"""The Lane lowering of an M=128 `plgpu.tcgen05_mma` into a packed 16-bit TMEM accumulator: WG103.

Mirrors jax/experimental/mosaic/gpu/tcgen05.py `mma` (0.10.2, 0.12.0.1): after the operand and
element-type checks, M=128 requires `d.layout == tmem_default_layout(packing=1)`; a float16
accumulator allocated `packed=True` has `tmem_default_layout(packing=2)`, and the lowering raises
"Accumulator layout mismatch: expected …, got …" on the MMA's line (before the accumulator
dtype check, which models/tcgen05_lowering.py leaves to a packed accumulator for that reason).
Claimed only in the case models/tcgen05_m64.simple_mma describes, with float16 operands.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.models.tcgen05_m64 import extend_lane_mma, simple_mma
from wgmma_lsp.rules import tcgen05_acc_layout


def packed_accumulator(call: Call) -> bool:
    mma = simple_mma(call, "float16")
    if mma is None:
        return False
    acc, m, _, _, _ = mma
    a = call.get(1, "a")
    return m == 128 and acc.attr("packed") is True and getattr(getattr(a, "dtype", None), "name", None) == "float16"


def _check(call: Call) -> None:
    if packed_accumulator(call):
        call.interp.report(tcgen05_acc_layout.RULE, tcgen05_acc_layout.message(2), call.span, call.line)


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 39


def install() -> None:
    """Extend the tcgen05_mma model (called once by `registry.load_all`)."""
    extend_lane_mma(_check)

"""WG112: `plgpu.wgmma` and `plgpu.tcgen05_mma` unpack their operands' shapes into two names
each (`m, n = acc.shape`) before any of JAX's checks: an operand of another rank fails with
Python's own `ValueError`, in the analysed Python's words."""

from __future__ import annotations

from wgmma_lsp.interpret import env_packages
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.rules import wgmma_operand_rank


def unpacking_message(got: int, expected: int) -> str | None:
    """CPython's `ValueError` for unpacking a tuple of `got` items into `expected` names, as the
    analysed Python words it (3.10-3.13; None for another, whose words are not known here)."""
    version = env_packages.analysed_python()
    if version is None or not (3, 10) <= version <= (3, 13):
        return None
    if got > expected:
        return f"too many values to unpack (expected {expected})"
    return f"not enough values to unpack (expected {expected}, got {got})"


def unpacking_fails(call: Call, shapes: list[tuple | None]) -> bool:
    """`plgpu.wgmma` and `plgpu.tcgen05_mma` unpack `acc.shape`, `a.shape`, `b.shape` into two
    names each, in that order, first thing: the first known shape of another rank fails there
    with Python's `ValueError` (its words as CPython 3.10-3.13 print them). True when reported."""
    for shape in shapes:
        if shape is None:
            return False  # this one may fail first, or not: the next ones are not looked at
        if len(shape) == 2:
            continue
        words = unpacking_message(len(shape), 2)
        if words is None:
            return False
        call.interp.report(wgmma_operand_rank.RULE, words, call.span, call.line)
        return True
    return False

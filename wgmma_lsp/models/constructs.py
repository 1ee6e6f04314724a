"""Objects JAX validates when they are built, before anything is traced.

Mirrors (jax 0.10.2): `Barrier.__post_init__` / `ClusterBarrier.__post_init__`,
`SwizzleTransform.__post_init__`, `CompilerParams.__post_init__`
(jax/_src/pallas/mosaic_gpu/core.py) and `find_swizzle` (jax/_src/pallas/mosaic_gpu/helpers.py).
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, Value, as_int
from wgmma_lsp.models.registry import model
from wgmma_lsp.rules import (
    barrier_num_arrivals, compiler_params_profile, find_swizzle_minor_dim, swizzle_value,
)


def barrier_ok(call: Call) -> bool:
    """`num_arrivals` (default 1) must be >= 1; False when JAX raises here (reported)."""
    v = call.kwargs.get("num_arrivals")
    n = as_int(v) if v is not None else None
    if n is not None and n < 1:
        call.interp.report(barrier_num_arrivals.RULE, f"Num arrivals must be at least 1, but got {n}",
                           call.span_of(99, "num_arrivals"), call.line, data={"n": n})
        return False
    return True


def swizzle_ok(call: Call, swizzle: int | None) -> bool:
    if swizzle is not None and swizzle not in (32, 64, 128):
        call.interp.report(swizzle_value.RULE,
                           f"Swizzle {swizzle} is not supported. Only 32, 64 and 128 are accepted.",
                           call.span_of(0, "swizzle"), call.line, data={"swizzle": swizzle})
        return False
    return True


def _truthy(v: Value | None, default: object) -> bool | None:
    if v is None:
        return bool(default)
    if isinstance(v, Const) and isinstance(v.value, (int, float, str, bool)) or \
            isinstance(v, Const) and v.value is None:
        return bool(v.value)
    return None


def compiler_params_ok(call: Call) -> bool:
    """`bool(profile_space) ^ bool(profile_dir)` raises (the class is keyword-only)."""
    if not call.complete or call.args:
        return True
    space = _truthy(call.kwargs.get("profile_space"), 0)
    directory = _truthy(call.kwargs.get("profile_dir"), "")
    if space is None or directory is None or space == directory:
        return True
    given = "profile_space" if space else "profile_dir"
    call.interp.report(compiler_params_profile.RULE, compiler_params_profile.MESSAGE,
                       call.span_of(99, given), call.line)
    return False


@model("plgpu.find_swizzle")
def _find_swizzle(call: Call) -> Value:
    """`find_swizzle(minor_dim_bits, what="")`: the largest swizzle (128, 64, 32, 16 bytes) that
    divides the minor dimension."""
    bits = as_int(call.get(0, "minor_dim_bits"))
    what = call.get(1, "what", Const(""))
    if bits is None:
        return UNKNOWN
    for swizzle_bytes in (128, 64, 32, 16):
        if bits % (swizzle_bytes * 8) == 0:
            return Const(swizzle_bytes)
    if not (isinstance(what, Const) and isinstance(what.value, str)):
        return UNKNOWN
    suffix = f" for {what.value}" if what.value else ""
    call.interp.report(find_swizzle_minor_dim.RULE,
                       f"No valid out swizzle{suffix}: minor dimension has {bits} bits, which is not a "
                       "multiple of 128 (16 bytes)", call.span_of(0, "minor_dim_bits"), call.line,
                       data={"bits": bits})
    return UNKNOWN

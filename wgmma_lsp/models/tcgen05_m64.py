"""The Lane lowering of a non-collective M=64 `plgpu.tcgen05_mma`: WG102.

Mirrors jax/experimental/mosaic/gpu/tcgen05.py `mma` (0.10.2, 0.12.0.1): with M=64 and no
collective axis, N is split over two lane groups, and `8 * b_swizzle // bitwidth > n // 2`
raises "Swizzle=… is too big for MMA with M=64. Try lowering it." on the MMA's line.

Claimed only where none of the earlier checks (models/tcgen05_lowering.py, which leaves M=64
alone, and the wrappers in models/blackwell.py) can fire: both operands SMEM refs tiled
`(8, swizzle // itemsize)` and swizzled alike, of one 16-bit floating dtype, shapes (64, K) and
(K, N); a float32 TMEM accumulator (64, N) without an explicit layout or collective flag; no
scales, no collective axis; the call itself reported nothing.
"""

from __future__ import annotations


from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.models import blackwell  # noqa: F401 - its tcgen05_mma model is wrapped below
from wgmma_lsp.models.registry import MODELS
from wgmma_lsp.models.tcgen05_lowering import _operand
from wgmma_lsp.rules import tcgen05_m64_swizzle

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable

_DTYPES = {"bfloat16", "float16"}


def simple_mma(call: Call, acc_dtype: str) -> tuple[RefVal, int, int, int, int] | None:
    """(acc, m, n, rhs swizzle, operand bits) of an unscaled, non-collective tcgen05_mma whose
    operands pass every operand check (tiled and swizzled alike, one 16-bit dtype, shapes
    (M, K) and (K, N)) and whose TMEM accumulator of `acc_dtype` has no explicit layout."""
    if set(call.kwargs) - {"accumulate", "barrier"} or len(call.args) > 4:
        return None
    acc, a, b = call.get(0, "acc"), call.get(1, "a"), call.get(2, "b")
    if not (isinstance(acc, RefVal) and isinstance(a, RefVal) and isinstance(b, RefVal)):
        return None
    if acc.root().kind != "tmem" or acc.base is not None or T.concrete(acc.dtype) is None \
            or acc.dtype.name != acc_dtype or acc.attr("layout") is not False or acc.attr("collective"):
        return None
    lhs, rhs = _operand(a), _operand(b)
    if lhs is None or rhs is None or lhs[0] != "tiled" or rhs[0] != "tiled" or lhs[2] != rhs[2]:
        return None
    if T.concrete(a.dtype) is None or T.concrete(b.dtype) is None or a.dtype.name != b.dtype.name \
            or a.dtype.name not in _DTYPES:
        return None
    bits, swizzle = T.itemsize_bits(a.dtype), rhs[2]
    fit = (8, 8 * swizzle // bits)  # type: ignore[operator]
    if lhs[1] != fit or rhs[1] != fit:
        return None
    shapes = (acc.shape, a.shape, b.shape)
    if any(s is None or len(s) != 2 or not all(isinstance(d, int) for d in s) for s in shapes):
        return None
    (m, n), (m2, k), (k2, n2) = shapes  # type: ignore[misc]
    if m != m2 or k != k2 or n != n2 or n % 8:
        return None
    return acc, m, n, swizzle, bits  # type: ignore[return-value]


def too_big_swizzle(call: Call) -> int | None:
    """The rhs swizzle when the call is the modelled M=64 case and it does not fit N // 2."""
    mma = simple_mma(call, "float32")
    if mma is None:
        return None
    _, m, n, swizzle, bits = mma
    return swizzle if m == 64 and 8 * swizzle // bits > n // 2 else None


def extend_lane_mma(check: Callable[[Call], None]) -> None:
    """Extend the tcgen05_mma model with `check(call)`, run after it when the call reported
    nothing, under Lane semantics, on JAX 0.10 and 0.12, with every argument known (for this
    module's and models/tcgen05_acc_layout.py's `install`)."""
    original = MODELS["plgpu.tcgen05_mma"]

    def wrapped(call: Call) -> Value:
        interp = call.interp
        before = interp.report_serial  # (a report JAX's earlier error dropped counts too)
        out = original(call)
        v = installed()
        if interp.report_serial == before and interp.kernel.lowering == "lane" and v is not None \
                and v[:2] in ((0, 10), (0, 12)) and call.complete:
            check(call)
        return out

    MODELS["plgpu.tcgen05_mma"] = wrapped


def _check(call: Call) -> None:
    swizzle = too_big_swizzle(call)
    if swizzle is not None:
        call.interp.report(tcgen05_m64_swizzle.RULE, tcgen05_m64_swizzle.message(swizzle), call.span, call.line)


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 38


def install() -> None:
    """Extend the tcgen05_mma model (called once by `registry.load_all`)."""
    extend_lane_mma(_check)

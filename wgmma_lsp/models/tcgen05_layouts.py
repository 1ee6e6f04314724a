"""Warpgroup: the `plgpu.tcgen05_mma` SMEM operands layout inference cannot place (WG078).

Under Warpgroup semantics an SMEM operand's explicit transforms become a fixed assignment of
layout inference (`_with_transforms_constraint_system`), and the MMA's derivation rule
(`_tcgen05_mma_constraint_system`, `jax/experimental/mosaic/gpu/layout_inference.py`) asks
each of `a` and `b` for a valid MMA tiling: `(8, swizzle * 8 // bitwidth)` with that swizzle,
for swizzles 32, 64 and 128. An operand whose own transforms are not of that form makes the
system unsatisfiable: `Failed to infer a possible set of layouts…`, raised with no line of the
kernel in JAX's traceback (blamed at the `plgpu.kernel` call). Unlike WGMMA, the two operands'
swizzles need not agree.

- A tiling whose minor dimension is the swizzle's (tiling (16, 64) with a 128-byte swizzle for
  bf16) but whose rows are not 8: JAX 0.10 (its `IsValidMmaTiling`) and 0.12
  (`mma_tiling_constraint`) alike.
- A tiling without a swizzle: JAX 0.12 takes the swizzle as none, which no valid tiling has;
  0.10 computes the swizzle from the tiling and accepts.
- A swizzle without a tiling: 0.12 fails to infer the layouts; 0.10 refuses the lone swizzle
  (`Unsupported transforms [<SwizzlingMode…>]`). Which of the two the installed JAX does is read
  from its source (`jax_source.layout_inference_takes_swizzle_only`).

Claimed only where nothing else fails first (each checked with real JAX on both versions:
fixtures lowering_kernel/kernel_level_tcgen05_*_warpgroup.py): operands are SMEM buffers
without views, of known 2-D shapes each tiling divides, whose minor dimension some valid MMA
tiling divides (else JAX 0.12 raises "No valid tiling found"); the other operand untransformed
or fitting exactly; a 32-bit accumulator of 128 rows without an explicit TMEM layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.models.memory_spaces import lowered_space
from wgmma_lsp.models.wgmma_lowering import layout_failure
from wgmma_lsp.rules.base import kernel_level_note

_SWIZZLE_MODE = {128: "k128ByteSwizzle", 64: "k64ByteSwizzle", 32: "k32ByteSwizzle"}


@dataclass(frozen=True)
class _Smem:
    """An SMEM operand's shape, bits and tiling."""
    shape: tuple[int, int]
    bits: int
    tiling: tuple[int, ...] | None
    swizzle: int | None
    kinds: tuple[str, ...]

    def fits(self) -> bool:
        """Tiled (8, swizzle elements) and swizzled, dividing the buffer: a valid MMA tiling."""
        return (self.kinds == ("tiling", "swizzle") and self.swizzle in _SWIZZLE_MODE
                and self.tiling == (8, self.swizzle * 8 // self.bits) and self._divides())  # type: ignore[operator]

    def _divides(self) -> bool:
        t = self.tiling
        return t is not None and len(t) == 2 and all(x > 0 and s % x == 0 for s, x in zip(self.shape, t))

    def has_mma_tiling(self) -> bool:
        """Some valid MMA tiling divides the buffer (the smallest: 32-byte swizzle)."""
        return self.shape[0] % 8 == 0 and self.shape[1] % (256 // self.bits) == 0


def _smem(v: Value) -> _Smem | None:
    if not isinstance(v, RefVal) or v.base is not None or v.kind != "plain":
        return None
    root = v.root()
    if root is not v or lowered_space(root) != "smem" or T.concrete(v.dtype) is None:
        return None
    shape = v.shape
    if shape is None or len(shape) != 2 or not all(isinstance(d, int) and d > 0 for d in shape):
        return None
    kinds = tuple(t.kind for t in v.transforms)
    if kinds not in ((), ("tiling",), ("swizzle",), ("tiling", "swizzle")):
        return None
    tiling = next((tuple(t.params) for t in v.transforms if t.kind == "tiling"), None)
    swizzle = next((t.params[0] for t in v.transforms if t.kind == "swizzle" and t.params), None)
    if tiling is not None and not all(isinstance(x, int) for x in tiling):
        return None
    if "swizzle" in kinds and swizzle not in _SWIZZLE_MODE:
        return None
    return _Smem((shape[0], shape[1]), T.itemsize_bits(v.dtype), tiling, swizzle, kinds)  # type: ignore[arg-type]


def _failure(side: str, op: _Smem) -> tuple[str, str] | None:
    """(diagnostic, JAX's message) when layout inference cannot place this operand; None when
    it can, or when another error may come first."""
    if op.kinds == ("tiling", "swizzle") and not op.fits():
        elems = op.swizzle * 8 // op.bits  # type: ignore[operator]
        if op.tiling is None or len(op.tiling) != 2 or op.tiling[1] != elems or not op._divides():
            return None  # the with_transforms op may fail first ("Cannot apply…", "Cannot honor…")
        return (f"MMA {side} tiling {op.tiling} does not fit its swizzle {op.swizzle} "
                f"(expected (8, {elems})): {layout_failure()}", layout_failure())
    if op.kinds == ("tiling",) and matches(">=0.12") and op._divides():
        return f"MMA {side} is tiled but not swizzled: {layout_failure()}", layout_failure()
    if op.kinds == ("swizzle",) and op.shape[1] == op.swizzle * 8 // op.bits:  # type: ignore[operator]
        takes_it = jax_source.layout_inference_takes_swizzle_only()
        if takes_it:
            return f"MMA {side} is swizzled but not tiled: {layout_failure()}", layout_failure()
        if takes_it is False:
            text = f"Unsupported transforms [<SwizzlingMode.{_SWIZZLE_MODE[op.swizzle]}: {op.swizzle}>]"  # type: ignore[index]
            return text, text
    return None


def check_warpgroup_layouts(call: Call, acc: Value, a: Value, b: Value) -> bool:
    """Report the first operand layout inference cannot place (Warpgroup); True if reported."""
    from wgmma_lsp.rules import tcgen05_operand_transforms

    interp = call.interp
    ks = interp.kernel.span
    if interp.kernel.lowering != "warpgroup" or ks is None:
        return False
    if not isinstance(acc, RefVal) or acc.base is not None or acc.root().kind != "tmem" \
            or T.concrete(acc.dtype) is None or T.itemsize_bits(acc.dtype) != 32 \
            or acc.attr("layout") is not False or not acc.shape or acc.shape[0] != 128:
        return False
    ops = [(_smem(a), "lhs", 1, "a"), (_smem(b), "rhs", 2, "b")]
    if any(o is None or not o.has_mma_tiling() for o, *_ in ops):
        return False
    failures = [(_failure(side, o), o, i, name) for o, side, i, name in ops]  # type: ignore[arg-type]
    if any(f is None and not (o.kinds == () or o.fits()) for f, o, _, _ in failures):  # type: ignore[union-attr]
        return False  # an operand that is neither placed nor proven unplaceable
    found = [(f, i, name) for f, _, i, name in failures if f is not None]
    # JAX 0.10 raises at a lone swizzle as it derives the constraints, before solving them.
    raising = [x for x in found if x[0][1] != layout_failure()]
    if len({x[0][1] for x in raising}) > 1:
        return False  # which buffer's with_transforms JAX derives first is not modelled
    for (message, jax_message), i, name in (raising or found)[:1]:
        interp.report(tcgen05_operand_transforms.RULE, message, call.span_of(i, name), ks.line,
                      related=[kernel_level_note(ks)],
                      data={"semantics": "warpgroup", "jax_message": jax_message})
        return True
    return False

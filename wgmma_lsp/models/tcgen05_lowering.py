"""What the Lane lowering of `plgpu.tcgen05_mma` rejects (jax 0.10.2), for the common case: an
unscaled, dense, non-collective MMA with M=128, operands in SMEM.

Mirrors, in JAX's order:
- `jax._src.pallas.mosaic_gpu.primitives._tcgen05_mma_lowering` (Lane): the lhs transforms must
  be exactly tiling (8, swizzle // itemsize) then swizzle (views on top); the rhs must have
  transforms at all (else a bare `assert b_transforms_tree is not None`), fitting the same way;
  lhs and rhs swizzles must be equal;
- `jax.experimental.mosaic.gpu.tcgen05.mma`: same element type for A and B, the accumulator's
  TMEM layout (unpacked for M=128), the accumulator dtype each element type allows, N a multiple
  of 8 (16 for s32) and N > 256 only for 512.
Anything outside that case (TMEM lhs, M=64, explicit TMEM layouts, views that slice the tiled
dimensions) is left alone.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.models.memory_spaces import lowered_space
from wgmma_lsp.models.tcgen05_layouts import check_warpgroup_layouts
from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.models.wgmma_lowering import MLIR
from wgmma_lsp.rules import tcgen05_acc_dtype, tcgen05_n, tcgen05_operand_transforms, tcgen05_same_dtype
from wgmma_lsp.rules.base import kernel_level_note

_FLOATS_F32_ONLY = {"float32", "bfloat16"}
_F16_OR_F32 = {"float16", "float8_e4m3fn", "float8_e5m2"}


def _operand(ref: Value) -> tuple[str, tuple | None, int | None] | None:
    """("plain", None, None) for an SMEM ref without transforms and without a view; ("tiled",
    tiling, swizzle) for a ref tiled and swizzled at allocation with views that only index its
    leading dimensions (and a (1, 0) transpose); None when not modelled."""
    if not isinstance(ref, RefVal):
        return None
    root = ref.root()
    if root.kind != "plain" or lowered_space(root) != "smem" or root.shape is None or ref.shape is None:
        return None
    own = root.transforms
    view = ref.transforms[len(own):]
    if not own:
        return ("plain", None, None) if ref.base is None else None
    if len(own) != 2 or own[0].kind != "tiling" or own[1].kind != "swizzle":
        return None
    if any(t.kind not in ("index", "transpose") for t in view):
        return None
    if any(t.kind == "transpose" and tuple(t.params) != (1, 0) for t in view):
        return None
    if any(t.kind == "index" for t in view):
        if len(ref.shape) < 2 or tuple(sorted(ref.shape[-2:], key=str)) != tuple(sorted(root.shape[-2:], key=str)):
            return None  # the view slices the tiled dimensions: other checks first
    swizzle = own[1].params[0] if own[1].params else None
    if not isinstance(swizzle, int):
        return None
    return ("tiled", tuple(own[0].params), swizzle)


#: The JAX versions whose Lane lowering of tcgen05_mma is mirrored here: 0.12 raises the same
#: errors on the same lines (docs/coverage.md, rows 57-63), and words the dtype check its own way
#: (WG079's template for 0.12), letting the e4m3/e5m2 FP8 pair through.
MIRRORED = ((0, 10), (0, 12))
_FP8 = {"f8E4M3FN", "f8E5M2"}


def _tmem_lhs_types_differ(call: Call, a: Value, b: Value) -> bool:
    """Warpgroup, an lhs in TMEM (tokamax's attention keeps P there): the `mosaic_gpu.tcgen05_mma`
    op verifier compares the element types of `a` and `b` as the op is built, on the MMA's line,
    as for an SMEM lhs (below; fixture tcgen05_mixed_dtypes_warpgroup.py, both kernels). The rhs
    an SMEM ref whose transforms are known. Reported when proven; True if it was."""
    if not isinstance(a, RefVal) or not isinstance(b, RefVal) or a.root().kind != "tmem" \
            or _operand(b) is None or T.concrete(a.dtype) is None or T.concrete(b.dtype) is None:
        return False
    if any(t.kind != "index" for t in a.transforms[len(a.root().transforms):]):
        return False
    if a.dtype.name not in MLIR or b.dtype.name not in MLIR:  # type: ignore[union-attr]
        return False
    a_t, b_t = MLIR[a.dtype.name], MLIR[b.dtype.name]  # type: ignore[union-attr]
    if a_t == b_t or (matches(">=0.12") and {a_t, b_t} <= _FP8):
        return False
    call.interp.report(tcgen05_same_dtype.RULE, _verifier_same_type(), call.span, call.line)
    return True


def _verifier_same_type() -> str:
    """The `mosaic_gpu.tcgen05_mma` op verifier's words for operands of two element types."""
    return ("'mosaic_gpu.tcgen05_mma' op The `a` and `b` inputs must have the same element type"
            + (", except that FP8 types (f8E4M3FN and f8E5M2) may be mixed." if matches(">=0.12") else "."))


def check_mma_lowering(call: Call, acc: Value, a: Value, b: Value) -> None:
    """Lane: every check below. Warpgroup (0.10 and 0.12): JAX lowers the MMA after layout
    inference and raises the accumulator-dtype and N errors with no kernel line in its traceback
    (fixtures lowering_kernel/kernel_level_tcgen05_*_warpgroup.py); the operand checks differ
    there, so a kernel failing one of them is left alone."""
    interp = call.interp
    if interp.kernel.lowering not in ("lane", "warpgroup") or installed() is None \
            or installed()[:2] not in MIRRORED:
        return
    wg = interp.kernel.lowering == "warpgroup"
    if wg and interp.kernel.span is None:
        return
    if not isinstance(acc, RefVal) or acc.root().kind != "tmem" or T.concrete(acc.dtype) is None \
            or acc.shape is None:
        return
    if wg and check_warpgroup_layouts(call, acc, a, b):
        return
    if wg and _tmem_lhs_types_differ(call, a, b):
        return
    lhs, rhs = _operand(a), _operand(b)
    if lhs is None or rhs is None or not isinstance(a, RefVal) or not isinstance(b, RefVal):
        return
    if T.concrete(a.dtype) is None or T.concrete(b.dtype) is None:
        return  # unknown or symbolic (`x.dtype`): no fact about the widths
    span, line = call.span, call.line
    a_bits, b_bits = T.itemsize_bits(a.dtype), T.itemsize_bits(b.dtype)
    lhs_swizzle = None
    if lhs[0] == "plain" and not wg:
        # JAX refuses an SMEM lhs without transforms first ("Unsupported transforms for LHS: []."
        # in 0.12, "Expected a 4D memref, got: ..." in 0.10): not claimed, and nothing after it.
        return
    if lhs[0] == "tiled":
        lhs_swizzle = lhs[2]
        expected = (8, 8 * lhs_swizzle // a_bits)  # type: ignore[operator]
        if lhs[1] != expected:
            if not wg:  # Warpgroup: another error (layout inference, the op verifier)
                interp.report(tcgen05_operand_transforms.RULE,
                              f"MMA lhs tiling does not fit swizzle. lhs_tiling={lhs[1]} "
                              f"expected={expected}",
                              call.span_of(1, "a"), line)
            return
    if rhs[0] == "plain":
        if not wg and matches(">=0.12"):  # 0.12 has no bare assert: it matches the transforms
            interp.report(tcgen05_operand_transforms.RULE, "Unsupported transforms for RHS: [].",
                          call.span_of(2, "b"), line)
        elif not wg:  # Warpgroup: another error (layout inference, the op verifier)
            interp.report(tcgen05_operand_transforms.RULE,
                          "The tcgen05_mma rhs must be tiled and swizzled in SMEM: allocate it with "
                          "transforms=(plgpu.TilingTransform((8, swizzle // itemsize)), "
                          "plgpu.SwizzleTransform(swizzle)) (JAX: AssertionError from "
                          "`assert b_transforms_tree is not None`)", call.span_of(2, "b"), line)
        return
    rhs_swizzle = rhs[2]
    expected = (8, 8 * rhs_swizzle // b_bits)  # type: ignore[operator]
    if rhs[1] != expected:
        if not wg:  # Warpgroup: another error (layout inference, the op verifier)
            interp.report(tcgen05_operand_transforms.RULE,
                          f"MMA rhs tiling does not fit swizzle rhs_tiling={rhs[1]} expected={expected}",
                          call.span_of(2, "b"), line)
        return
    if lhs_swizzle is not None and lhs_swizzle != rhs_swizzle:
        if not wg:  # Warpgroup: another error (layout inference, the op verifier)
            interp.report(tcgen05_operand_transforms.RULE,
                          f"MMA rhs swizzle must match lhs swizzle. lhs_swizzle={lhs_swizzle} "
                          f"rhs_swizzle={rhs_swizzle}", span, line)
        return
    names = (a.dtype.name, b.dtype.name, acc.dtype.name)
    if any(n not in MLIR for n in names):
        return
    a_t, b_t, d_t = (MLIR[n] for n in names)
    if a_t != b_t:
        new = matches(">=0.12")
        if new and {a_t, b_t} <= _FP8:
            return  # accepted; what follows is not mirrored for mixed operands
        if wg:  # the op verifier, on the MMA's line (fixture tcgen05_mixed_dtypes_warpgroup.py)
            text = _verifier_same_type()
        elif new:
            text = ("MMA requires A and B to have the same element type, except that FP8 types "
                    f"(f8E4M3FN and f8E5M2) may be mixed; got: {a_t} and {b_t}")
        else:
            text = f"MMA requires A and B to have the same element type, got: {a_t} and {b_t}"
        interp.report(tcgen05_same_dtype.RULE, text, span, line)
        return
    m, n = acc.shape[0], b.shape[-1] if b.shape else None
    if m != 128 or not isinstance(n, int):
        return
    if acc.attr("layout") is not False:
        return  # an explicit TMEM layout: not modelled
    if T.itemsize_bits(acc.dtype) != 32 and acc.attr("packed") is not False:
        return  # a packed 16-bit accumulator fails the layout check first (not modelled)
    elem = a.dtype.name
    if elem in _FLOATS_F32_ONLY:
        allowed = d_t == "f32"
        text = f"MMA with element type {a_t} only supports accumulators of type f32, but got: {d_t}"
    elif elem in _F16_OR_F32:
        allowed = d_t in ("f16", "f32")
        text = (f"MMA with element type {a_t} only supports accumulators of type f32 or f16, but got: "
                f"{d_t}")
    else:
        return
    blame, related = line, []
    if wg:
        ks = interp.kernel.span
        assert ks is not None
        blame = ks.line
        related = [kernel_level_note(ks)]
    if not allowed:
        if not wg or elem in _FLOATS_F32_ONLY:  # Warpgroup: proven for the f32-only operand types
            interp.report(tcgen05_acc_dtype.RULE, text, call.span_of(0, "acc"), blame, related=related)
        return
    if n % 8:
        if not wg:
            interp.report(tcgen05_n.RULE, f"In 1 CTA MMA, N must be a multiple of 8, got N={n}", span, line)
        return
    if n > 256 and n.bit_count() != 1:
        interp.report(tcgen05_n.RULE, f"The only supported N > 256, is 512, but got N={n}", span, blame,
                      related=related)

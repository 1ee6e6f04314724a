"""What Mosaic GPU's lowering of a TMA copy rejects (Lane semantics, jax 0.10.2).

Mirrors, in JAX's order:
- `jax._src.pallas.mosaic_gpu.primitives._copy_gmem_to_smem_lowering` (Lane): the bytes copied
  must be a multiple of the warpgroup size (128);
- `jax.experimental.mosaic.gpu.launch_context.LaunchContext.async_copy`: same element type,
  then the SMEM ref must have the shape of the GMEM slice; `_prepare_tma`: every GMEM stride but
  the last a multiple of 16 bytes, then the minor dimension of the slice a multiple of 16 bytes;
  then the SMEM window must be contiguous.
Claimed only where every input to those checks is known and simple: a `plgpu.kernel` GMEM
argument viewed through slices only (no integer indices), an SMEM buffer without transforms,
no collective or reduction copy.
"""

from __future__ import annotations

import math

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed, matches
from wgmma_lsp.interpret.values import Const, RefVal
from wgmma_lsp.models.copy_checks import TRACE_TIME_CHECKS, element_type_fix
from wgmma_lsp.models.wgmma_lowering import MLIR
from wgmma_lsp.rules import (
    tma_bytes_per_warpgroup, tma_element_type, tma_gmem_strides, tma_minor_dim, tma_slice_shape,
    tma_smem_contiguous,
)
from wgmma_lsp.rules.base import Related, kernel_level_note

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from collections.abc import Callable

WARPGROUP_SIZE = 128


def _int_shape(ref: RefVal) -> tuple[int, ...] | None:
    s = ref.shape
    if s is None or not all(isinstance(d, int) for d in s):
        return None
    return tuple(s)  # type: ignore[arg-type]


def _views_only(ref: RefVal) -> bool:
    return all(t.kind == "index" for t in ref.transforms[len(ref.root().transforms):])


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[i + 1:]) for i in range(len(shape))]


#: The JAX versions whose Lane lowering of a copy is mirrored here (by the harness's ground truth:
#: docs/coverage.md, rows 75-79 and 88). 0.12 checks dtypes and shapes earlier, while tracing
#: (models/copy_checks.py), and words the GMEM-stride check its own way (the rule's template).
#: Under Warpgroup semantics both raise the GMEM-stride, minor-dimension and contiguity errors
#: while lowering the kernel's copies, with no kernel line in the traceback (JAX blames the launch:
#: fixture lowering_kernel/kernel_level_tma_copies_warpgroup.py); the byte count is not checked.
MIRRORED = ((0, 10), (0, 12))


def check_copy_lowering(call: Call, gmem_to_smem: bool, barrier: Callable[[], object] | None = None) -> None:
    """The copy's lowering checks, in JAX's order. `barrier`: the check of its barrier (WG119),
    which JAX's lowering uses (`arrive_expect_tx`) after the Lane byte count and before the copy
    itself (`launch_context.async_copy`): run there, or where this check gives up before it."""
    interp = call.interp

    def given_up() -> None:
        if barrier is not None:
            barrier()

    if interp.kernel.lowering not in ("lane", "warpgroup") or installed() is None \
            or installed()[:2] not in MIRRORED:
        return given_up()
    lane = interp.kernel.lowering == "lane"
    checked_at_trace = matches(TRACE_TIME_CHECKS)
    if not call.complete or any(k in call.kwargs and not (isinstance(call.kwargs[k], Const)
                                                          and call.kwargs[k].value is None)
                                for k in ("collective_axes", "leader_tracked", "reduction_op")):
        return given_up()
    src, dst = call.get(0, "src"), call.get(1, "dst")
    gmem, smem = (src, dst) if gmem_to_smem else (dst, src)
    if not isinstance(gmem, RefVal) or not isinstance(smem, RefVal):
        return given_up()
    groot, sroot = gmem.root(), smem.root()
    if groot.kind != "plain" or groot.space != "gmem" or sroot.kind != "plain" or sroot.space != "smem":
        return given_up()
    if groot.transforms or sroot.transforms or not _views_only(gmem) or not _views_only(smem):
        return given_up()
    gshape, sshape, rshape = _int_shape(gmem), _int_shape(smem), _int_shape(groot)
    if gshape is None or sshape is None or rshape is None or len(gshape) != len(rshape):
        return given_up()  # integer indices on the GMEM side squeeze dimensions: not modelled
    if T.concrete(gmem.dtype) is None or T.concrete(smem.dtype) is None:
        return given_up()
    gname, sname = gmem.dtype.name, smem.dtype.name
    if gname not in MLIR or sname not in MLIR:
        return given_up()
    line = call.line
    span = call.span

    def related(ref: RefVal) -> list[Related]:
        r = ref.root()
        return [Related(r.origin, f"{r.aval()} allocated here ({r.origin_desc})")] if r.origin else []

    late_line, late_related = line, []  # where the last three checks are blamed
    if not lane:
        ks = interp.kernel.span
        if ks is None:
            return given_up()
        late_line = ks.line
        late_related = [kernel_level_note(ks)]
    sbits = T.itemsize_bits(smem.dtype)
    if gmem_to_smem and lane:
        bits = math.prod(sshape) * sbits
        if bits % 8:
            return
        if (bits // 8) % WARPGROUP_SIZE:
            interp.report(tma_bytes_per_warpgroup.RULE,
                          "Only copies transferring a number of bytes divisible by the warpgroup size "
                          f"are supported. Got bytes={bits // 8} but warpgroup size is {WARPGROUP_SIZE}",
                          span, line, related=related(smem))
            return
    if barrier is not None and barrier():
        return  # JAX raised at the barrier
    src_t, dst_t = (MLIR[gname], MLIR[sname]) if gmem_to_smem else (MLIR[sname], MLIR[gname])
    if src_t != dst_t:
        if not checked_at_trace and lane:  # else models/copy_checks.py reported it, or could not decide
            interp.report(tma_element_type.RULE, f"Expected same element type, got {src_t} and {dst_t}",
                          span, line, related=related(smem) + related(gmem),
                          data=element_type_fix(interp, gmem, smem))
        return
    if gshape != sshape:
        if not checked_at_trace and lane:
            interp.report(tma_slice_shape.RULE,
                          "Expected the SMEM reference to have the same shape as the transformed slice: "
                          f"{sshape} != {gshape}", span, line, related=related(smem))
        return
    bits = T.itemsize_bits(gmem.dtype)
    if len(rshape) > 5:
        return
    if any(s * bits % 128 for s in _strides(rshape)[:-1]):
        interp.report(tma_gmem_strides.RULE, tma_gmem_strides.RULE.installed_template(),  # literal
                      span, late_line, related=late_related + related(gmem))
        return
    if rshape and rshape[-1] == 1 and gshape[-1] == 1:
        return  # unit dimensions are dropped first
    if not gshape and installed()[:2] < (0, 12):
        return  # a scalar: 0.10 indexes its empty slice shape (an IndexError of JAX's own)
    # (0.12: `minor_dim = slice_shape[-1] if slice_shape else 1`: a scalar is one element)
    if (zeroth := (gshape[-1] if gshape else 1) * bits) % 128:
        interp.report(tma_minor_dim.RULE,
                      "Async copies require the number of bits copied along the last dimension to be "
                      f"divisible by 128, but got {zeroth}", span, late_line, related=late_related)
        return
    sroot_shape = _int_shape(sroot)
    if sroot_shape is None or len(sroot_shape) != len(sshape):
        return
    strides = _strides(sroot_shape)
    if any(s != cs and d != 1 for s, cs, d in zip(strides, _strides(sshape), sshape)):
        interp.report(tma_smem_contiguous.RULE,
                      "async_copy needs the SMEM reference to be contiguous, but got strides "
                      f"{strides} for shape {list(sshape)}", span, late_line,
                      related=late_related + related(smem))

"""WG119: a barrier operation lowered with a whole array of barriers.

A `plgpu.Barrier(num_barriers=n)` allocation is one ref of `n` barriers (of shape `num_barriers`);
an operation on a barrier lowers it to one `mgpu.BarrierRef` of all of them unless the ref is
viewed (`bar.at[i]`: `_get_barrier_base_index` picks one), and using it then raises
`ValueError: Operation is only valid for a single barrier, but barrier ref contains {n}. ...`
(jax/experimental/mosaic/gpu/utils.py, `BarrierRef.get_ptr`; the same in 0.10.2, 0.12.0.1 and
0.12.1, under Lane and Warpgroup semantics, on the operation's line). Checked against JAX for
`barrier_wait`, `barrier_arrive`, the barrier of `copy_gmem_to_smem`, of `tcgen05_mma` and of
`tcgen05_commit_arrive`: a copy uses it after its byte count (Lane) and before its own checks
(models/tma_lowering.py), an MMA after its checks under Lane semantics and first under Warpgroup
semantics.
Claimed for a plain barrier allocation of known shape, passed as it is."""

from __future__ import annotations

import math

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.rules import barrier_not_indexed
from wgmma_lsp.rules.base import Related

MIRRORED = ((0, 10), (0, 12))


def check(call: Call, barrier: Value, i: int, name: str, last: bool = False) -> bool:
    """The barrier argument `name` (position `i`): reported, True, when the lowering raises.
    `last`: the operation uses its barrier after its other lowering checks, so not when one of
    them failed at this call (now, or on an earlier run of it: a repeated finding is not
    added again)."""
    interp = call.interp
    if last and _other_lowering_error(call):
        return False
    if interp.kernel.lowering not in ("lane", "warpgroup") or installed() is None \
            or installed()[:2] not in MIRRORED:
        return False
    if not isinstance(barrier, RefVal) or barrier.base is not None or barrier.transforms:
        return False
    if barrier.kind != "barrier" or getattr(barrier.dtype, "name", None) != "barrier":
        return False
    shape = barrier.shape
    if shape is None or not all(isinstance(d, int) for d in shape):
        return False
    n = math.prod(shape)  # type: ignore[arg-type]
    if n <= 1:
        return False
    related = [Related(barrier.origin, f"{n} barriers allocated here ({barrier.origin_desc})")] \
        if barrier.origin is not None else []
    interp.report(barrier_not_indexed.RULE, barrier_not_indexed.message(n), call.span_of(i, name),
                  call.line, related=related)
    return True


def _other_lowering_error(call: Call) -> bool:
    """A lowering error of another rule found within this call (or no call span to tell)."""
    cs = call.span
    if cs is None:
        return True
    return any(f.rule is not barrier_not_indexed.RULE and f.rule.installed_stage() == "lower"
               and f.span is not None and cs.contains(f.span.line, f.span.col)
               for f in call.interp.findings)

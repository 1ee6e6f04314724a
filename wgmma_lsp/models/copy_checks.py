"""What JAX 0.12 checks of a TMA copy while tracing (both lowering semantics).

0.12's abstract evals of `copy_gmem_to_smem_p` and `copy_smem_to_gmem_p`
(jax/_src/pallas/mosaic_gpu/primitives.py), after the memory spaces (models/tma.py): the two refs,
seen through their `.at[...]` views, must have the same dtype ("Expected dtypes to match …"), and
the same shape ("Expected source shape to be …" from GMEM to SMEM, "Expected shapes to match …"
from SMEM to GMEM). JAX 0.10 has neither: its Lane lowering makes the same checks later, in other
words (models/tma_lowering.py). The rules' templates for each version are read back from the
installed source by tests/test_rule_templates.py.

Claimed only where both refs and their views are known: no collective or partitioned copy.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.interpret.values import Const, RefVal
from wgmma_lsp.models.user_spelling import jnp_alias
from wgmma_lsp.rules import tma_element_type, tma_slice_shape
from wgmma_lsp.rules.base import Related

#: The JAX versions whose copy primitives check dtypes and shapes at trace time.
TRACE_TIME_CHECKS = ">=0.12"


def _shape(ref: RefVal) -> tuple[int, ...] | None:
    s = ref.shape
    if s is None or not all(isinstance(d, int) for d in s):
        return None
    return tuple(s)  # type: ignore[arg-type]


def _views_only(ref: RefVal) -> bool:
    return all(t.kind == "index" for t in ref.transforms[len(ref.root().transforms):])


def _related(ref: RefVal) -> list[Related]:
    r = ref.root()
    return [Related(r.origin, f"{r.aval()} allocated here ({r.origin_desc})")] if r.origin else []


def element_type_fix(interp, gmem: RefVal, smem: RefVal) -> dict:
    """What WG071's fix needs: the SMEM buffer's allocation and the GMEM array's dtype."""
    root = smem.root()
    if root.space != "smem" or root.origin is None:
        return {}
    return {"alloc_span": root.origin, "needed": gmem.dtype.name, "jnp": jnp_alias(interp)}


def check_copy_trace(call: Call, gmem_to_smem: bool) -> bool:
    """False when JAX is proven to raise one of these checks here (then reported)."""
    if not matches(TRACE_TIME_CHECKS):
        return True
    if not call.complete or any(k in call.kwargs and not (isinstance(call.kwargs[k], Const)
                                                          and call.kwargs[k].value is None)
                                for k in ("collective_axes", "leader_tracked", "partitioned_axis")):
        return True
    src, dst = call.get(0, "src"), call.get(1, "dst")
    if not isinstance(src, RefVal) or not isinstance(dst, RefVal):
        return True
    if not (_views_only(src) and _views_only(dst)) or any(
            t.kind not in ("tiling", "swizzle", "index") for r in (src, dst) for t in r.root().transforms):
        return True
    if T.concrete(src.dtype) is None or T.concrete(dst.dtype) is None:
        return True
    if src.dtype.name != dst.dtype.name:
        gmem, smem = (src, dst) if gmem_to_smem else (dst, src)
        call.interp.report(tma_element_type.RULE,
                           f"Expected dtypes to match but src had type {src.dtype.name} and dst had type "
                           f"{dst.dtype.name}", call.span, call.line, related=_related(src) + _related(dst),
                           data=element_type_fix(call.interp, gmem, smem))
        return False
    s, d = _shape(src), _shape(dst)
    if s is None or d is None or s == d:
        return True
    if gmem_to_smem:
        msg = f"Expected source shape to be {d}, but got {s}. "  # JAX appends an empty partition note
    elif len(s) == len(d):
        msg = f"Expected shapes to match, but src has shape {s} and dst has shape {d}"
    else:
        return True  # zip(strict=True) fails first: not one of JAX's messages
    call.interp.report(tma_slice_shape.RULE, msg, call.span, call.line, related=_related(dst))
    return False

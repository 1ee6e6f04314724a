"""WG118: the predicate of `pl.when` / `lax.cond` must be a scalar.

`lax.cond(pred, ...)` (jax/_src/lax/control_flow/conditionals.py, `_cond`, the same in 0.10.2,
0.12.0.1 and 0.12.1) raises `TypeError: Pred must be a scalar, got {pred} of shape
{np.shape(pred)}.` for an array of any other rank, and `pl.when(pred)` calls it for any condition
that is not a Python bool (jax/_src/pallas/helpers.py). Claimed inside a kernel body, whose arrays
are JAX's tracers (`JitTracer(bool[128])`), for a predicate of known shape and a dtype that is
not weak (a weak type prints with a `~`)."""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import ArrayVal, Value
from wgmma_lsp.rules import cond_pred_scalar


def not_scalar(call: Call, pred: Value, span) -> bool:
    """Reported, True, when `pred` is surely an array of rank one or more (JAX raises here)."""
    if not call.interp.kernel.inside or not isinstance(pred, ArrayVal) or not pred.shape:
        return False
    shape = pred.shape
    dtype = T.concrete(pred.dtype)
    if not all(isinstance(d, int) for d in shape) or dtype is None or dtype.weak:
        return False
    call.interp.report(cond_pred_scalar.RULE, cond_pred_scalar.message(pred.aval(), tuple(shape)),  # type: ignore[arg-type]
                       span, call.line)
    return True

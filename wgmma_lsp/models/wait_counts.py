"""The count of a wait on in-flight operations: `plgpu.wgmma_wait(n)`, `plgpu.wait_smem_to_gmem(n)`,
`plgpu.wait_gmem_to_smem(n)`.

Mirrors (jax 0.12) the primitives' abstract evaluation: `if not isinstance(n, int) or n < 0:
raise ValueError(f"n must be a non-negative integer, got {n}")`. JAX 0.10 has no such check
(its lowering hands the count to an MLIR op whose verifier rejects it): nothing is claimed there.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, Value
from wgmma_lsp.models.registry import model
from wgmma_lsp.rules import wait_count_negative


def count_rejected(call: Call) -> bool:
    """Whether JAX rejects the wait's count (reported at the call)."""
    from wgmma_lsp.interpret.jax_version import matches

    n = call.get(0, "n", Const(None))
    if not (isinstance(n, Const) and type(n.value) is int and n.value < 0) or not matches(">=0.12"):
        return False
    call.interp.report(wait_count_negative.RULE, f"n must be a non-negative integer, got {n.value}",
                       call.span, call.line)
    return True


@model("plgpu.wgmma_wait", "plgpu.wait_gmem_to_smem")
def _wait(call: Call) -> Value:
    return UNKNOWN if count_rejected(call) else Const(None)

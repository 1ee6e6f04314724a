"""WG118 cond-pred-scalar: `pl.when(pred)` or `lax.cond(pred, ...)` given an array that is not a
scalar (`x > 0` of a whole block instead of one element)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG118",
    name="cond-pred-scalar",
    apis=("pl.when", "lax.cond"),
    summary="The predicate of pl.when / lax.cond must be a scalar.",
    template="Pred must be a scalar, got {pred} of shape {np.shape(pred)}.",
    exception="TypeError",
    jax_source="jax/_src/lax/control_flow/conditionals.py: _cond (pl.when calls lax.cond for a "
               "non-bool condition: jax/_src/pallas/helpers.py)",
    doc_file=doc_path(__file__),
    table_message="`Pred must be a scalar, got JitTracer(bool[128]) of shape (128,).`",
)


def message(aval: str, shape: tuple[int, ...]) -> str:
    """JAX's words for a traced predicate (a kernel body's values are `JitTracer`s, printed with
    their aval: jax/_src/interpreters/partial_eval.py, `DynamicJaxprTracer.__repr__`)."""
    return f"Pred must be a scalar, got JitTracer({aval}) of shape {shape}."

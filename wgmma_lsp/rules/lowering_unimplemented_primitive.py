"""WG084 lowering-unimplemented-primitive: a jnp/lax operation inside a Mosaic GPU kernel binds a
primitive the installed JAX's lowering has no rule for under the kernel's lowering semantics."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG084",
    name="lowering-unimplemented-primitive",
    apis=("jnp.dot", "jnp.matmul", "lax.dot", "lax.dot_general", "jnp.transpose", "lax.transpose",
          "jnp.swapaxes", "jnp.concatenate", "lax.concatenate", "jnp.stack", "jnp.argmax", "jnp.argmin",
          "lax.cumsum", "lax.sort", "lax.rev", "jnp.cumsum", "jnp.sort", "jnp.flip"),
    summary="An array operation in the kernel binds a primitive the Mosaic GPU lowering cannot lower "
            "under the kernel's semantics (jnp.dot / @ -> dot_general, .T -> transpose, jnp.stack, …).",
    template=("Unimplemented primitive in Pallas Mosaic GPU lowering: {eqn.primitive.name} for lowering "
              "semantics {module_ctx.lowering_semantics} and user thread semantics "
              "{module_ctx.primitive_semantics}. Please file an issue at "
              "https://github.com/jax-ml/jax/issues/new/choose."),
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: lower_jaxpr_to_mosaic_gpu (mosaic_lowering_rules)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    catalog_rows=(103,),
    table_message="Unimplemented primitive in Pallas Mosaic GPU lowering: {primitive} for lowering semantics …",
)

_SEMANTICS = {"lane": "LoweringSemantics.Lane", "warpgroup": "LoweringSemantics.Warpgroup"}


def message(primitive: str, lowering: str) -> str:
    """JAX's message for `primitive` (its name: `dot_general`) in a kernel lowered with
    `lowering` semantics ("lane"/"warpgroup"), at warpgroup level (PrimitiveSemantics.Warpgroup)."""
    return (f"Unimplemented primitive in Pallas Mosaic GPU lowering: {primitive} for lowering semantics "
            f"{_SEMANTICS[lowering]} and user thread semantics PrimitiveSemantics.Warpgroup. Please file "
            "an issue at https://github.com/jax-ml/jax/issues/new/choose.")

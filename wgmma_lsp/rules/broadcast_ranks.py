"""WG089 broadcast-ranks: an elementwise operator on two arrays of different ranks that NumPy's
broadcasting cannot align (jnp's rank promotion calls `lax.broadcast_shapes` first)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG089",
    name="broadcast-ranks",
    summary="An elementwise operator on arrays of different ranks needs their trailing dimensions "
            "to broadcast.",
    template="Incompatible shapes for broadcasting: shapes={list(shapes)}",
    exception="ValueError",
    jax_source="jax/_src/lax/lax.py: broadcast_shapes (called by jnp's promote_shapes)",
    doc_file=doc_path(__file__),
    table_message="`Incompatible shapes for broadcasting: shapes=[(128,), (64, 127)]`",
)

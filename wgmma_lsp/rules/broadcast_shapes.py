"""WG088 broadcast-shapes: an elementwise operator (`a + b`, `a < b`, ...) on two arrays of the
same rank whose dimensions neither match nor are 1 (lax's shape rule)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG088",
    name="broadcast-shapes",
    summary="An elementwise operator on two arrays of one rank needs each dimension equal or 1.",
    template='{name} got incompatible shapes for broadcasting: {", ".join(map(str, map(tuple, shapes)))}.',
    exception="TypeError",
    jax_source="jax/_src/lax/lax.py: _try_broadcast_shapes (the binary primitives' shape rule)",
    doc_file=doc_path(__file__),
    table_message="`add got incompatible shapes for broadcasting: (64, 128), (128, 128).`",
)

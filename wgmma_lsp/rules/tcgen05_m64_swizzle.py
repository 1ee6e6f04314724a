"""WG102 tcgen05-m64-swizzle: Lane: a non-collective M=64 tcgen05 MMA whose rhs swizzle is wider
than half of N."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG102",
    name="tcgen05-m64-swizzle",
    apis=("plgpu.tcgen05_mma",),
    summary="tcgen05_mma with M=64 (not collective) splits N over 2 lane groups: the rhs swizzle's "
            "elements must fit in N/2.",
    template="Swizzle={b_swizzle} is too big for MMA with M=64. Try lowering it.",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(59,),
)


def message(swizzle: int) -> str:
    return f"Swizzle={swizzle} is too big for MMA with M=64. Try lowering it."

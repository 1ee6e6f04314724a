"""WG103 tcgen05-acc-layout: Lane: an M=128 tcgen05 MMA into a packed 16-bit TMEM accumulator."""

from __future__ import annotations

from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG103",
    name="tcgen05-acc-layout",
    apis=("plgpu.tcgen05_mma", "plgpu.TMEM"),
    summary="tcgen05_mma with M=128 needs the unpacked TMEM accumulator layout: a 16-bit accumulator "
            "allocated packed=True does not have it.",
    template="Accumulator layout mismatch: expected {expected_d_layout}, got {d.layout}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(64,),
)


def layout(packing: int) -> str:
    """JAX's repr of `tmem_default_layout(packing)` (a TMEMLayout dataclass): JAX 0.12's
    TiledLayout has one more field, `unreduced_operation` (default None), which it prints."""
    tail = ", unreduced_operation=None" if matches(">=0.12") else ""
    return (f"TMEMLayout(tiling=Tiling(tiles=((128, {packing}), (32, {packing}))), warp_dims=(-4,), "
            f"lane_dims=(-2,), vector_dim=-1{tail})")


def message(packing: int) -> str:
    return f"Accumulator layout mismatch: expected {layout(1)}, got {layout(packing)}"

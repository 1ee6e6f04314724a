"""WG087 tiled-layout-shape: Lane: an array in the WGMMA register layout (a whole load of a tiled,
swizzled SMEM ref) must have a multiple of 64 rows."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG087",
    name="tiled-layout-shape",
    apis=("plgpu.TilingTransform", "jnp.sum", "jnp.max", "jnp.min"),
    summary="Lane: a tiled SMEM load of fewer than 64 rows (or a keepdims reduction of one, JAX 0.10) "
            "has no WGMMA register layout.",
    template="Tiling {self.tiles} does not apply to shape {orig_shape}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/fragmented_array.py: TiledLayout / Tiling.tile_shape",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    # 0.12 keeps the tiling message for loads; a keepdims reduction fails in its broadcast.
    version_templates=((">=0.12", "Tiling {self.tiles} does not apply to shape {orig_shape} / No compatible layout "
                                  "found for the broadcast result. Use plgpu.layout_cast on the output to suggest "
                                  "the desired output layout."),),
    catalog_rows=(101,),
    fix_summary="load 64-row multiples; reduce without keepdims",
)

#: The WGMMA register layout's tiling as JAX prints it (mosaic/gpu/fragmented_array.py
#: WGMMA_LAYOUT; the same in 0.10.2 and 0.12.0.1, for every element type).
WGMMA_TILES = "((64, 8), (16, 8), (8, 8), (2,))"


def message(shape: tuple[int, ...]) -> str:
    return f"Tiling {WGMMA_TILES} does not apply to shape {shape}"

#: JAX 0.12's error for a keepdims reduction of a WGMMA-layout array (lowering.py, the broadcast
#: that restores the reduced dimension).
NO_BROADCAST_LAYOUT = ("No compatible layout found for the broadcast result. Use plgpu.layout_cast on the output "
                       "to suggest the desired output layout.")

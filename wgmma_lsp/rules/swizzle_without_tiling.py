"""WG098 swizzle-without-tiling: Lane: a whole load of an SMEM ref swizzled but not tiled."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Unsupported swizzle transform with strided layout"

RULE = Rule(
    code="WG098",
    name="swizzle-without-tiling",
    apis=("plgpu.SwizzleTransform", "plgpu.SMEM"),
    summary="Lane: loading an SMEM ref that has a SwizzleTransform but no TilingTransform.",
    template=MESSAGE,
    # 0.12.1 prints the load's layout hint (None for a plain `s_ref[...]`: `message()`)
    version_templates=((">=0.12.1", "Unsupported swizzle transform for layout: {ctx.out_layout_hint}"),),
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _get_lowering_rule (Lane)",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(102,),
)


def message() -> str:
    """The installed JAX's words for a load with no layout hint (`ctx.out_layout_hint` None)."""
    return RULE.installed_template().replace("{ctx.out_layout_hint}", "None")

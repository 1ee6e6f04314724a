"""WG086 tiling-without-swizzle: Lane: a whole load or store of an SMEM ref tiled but not swizzled."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG086",
    name="tiling-without-swizzle",
    apis=("plgpu.TilingTransform", "plgpu.SMEM"),
    summary="Lane: loading or storing an SMEM ref that has a TilingTransform but no SwizzleTransform.",
    template="Tiling without swizzle is not supported.",
    # 0.12.1's Lane load/store no longer checks the tiling: the untiling left over matches no case
    version_templates=((">=0.12.1", "Unsupported transforms: {transforms}"),),
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _get_lowering_rule / _swap_lowering_rule (Lane)",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    fix_summary="add the SwizzleTransform the tiling fits",
)

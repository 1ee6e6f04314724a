"""WG018 wgmma-lhs-untransformed: a WGMMA lhs in SMEM without tiling and swizzle (Lane lowering)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path
from wgmma_lsp.rules.transforms_fix import add_transforms_fix

MESSAGE = ("When WGMMA lhs is passed in as a ref, it must be transformed by swizzling and tiling "
           "appropriately.")

RULE = Rule(
    code="WG018",
    name="wgmma-lhs-untransformed",
    apis=("plgpu.wgmma",),
    summary="Under Lane semantics a WGMMA lhs in SMEM needs TilingTransform + SwizzleTransform.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering (Lane)",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=add_transforms_fix,
    catalog_rows=(14,),
    fix_summary="add the transforms `plgpu.find_swizzle` picks",
    semantics=("lane",),
)

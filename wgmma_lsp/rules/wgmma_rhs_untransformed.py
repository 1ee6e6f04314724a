"""WG019 wgmma-rhs-untransformed: a WGMMA rhs in SMEM without any transforms (Lane lowering),
where JAX fails a bare `assert b_transforms is not None`."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path
from wgmma_lsp.rules.transforms_fix import add_transforms_fix

MESSAGE = ("WGMMA rhs in shared memory must be tiled and swizzled under Lane semantics "
           "(TilingTransform((8, swizzle // itemsize)) then SwizzleTransform(swizzle)); "
           "JAX fails a bare `assert b_transforms is not None` (AssertionError, no message)")

RULE = Rule(
    code="WG019",
    name="wgmma-rhs-untransformed",
    apis=("plgpu.wgmma",),
    summary="Under Lane semantics a WGMMA rhs in SMEM needs TilingTransform + SwizzleTransform.",
    template="(empty message) assert b_transforms is not None",
    exception="AssertionError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _wgmma_lowering (Lane)",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=add_transforms_fix,
    catalog_rows=(15,),
    table_message="bare `AssertionError` (`assert b_transforms is not None`); wgmma-lsp says what is missing",
    fix_summary="add the transforms `plgpu.find_swizzle` picks",
    semantics=("lane",),
)

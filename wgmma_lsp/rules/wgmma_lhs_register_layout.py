"""WG035 wgmma-lhs-register-layout: a WGMMA lhs in registers that is a splat constant
(`jnp.zeros/ones/full`) instead of a value in the WGMMA layout (Lane lowering), where JAX
fails with a bare dtype name."""

from __future__ import annotations

from wgmma_lsp.rules.accumulator_layout import fixes
from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = ("WGMMA lhs in registers must be in the WGMMA layout, but this value is a splat constant "
           "(jnp.zeros/ones/full): cast it with plgpu.layout_cast(x, plgpu.Layout.WGMMA) "
           "(JAX raises NotImplementedError: {mlir})")

STRIDED_MESSAGE = ("WGMMA lhs in registers must be in the WGMMA layout, but a load from an SMEM ref without "
                   "tiling and swizzle has a strided layout: tile and swizzle the ref, or pass the ref itself "
                   "(JAX: {jax})")


def strided_message() -> str:
    """STRIDED_MESSAGE quoting the installed JAX's own words (the template's second alternative:
    0.12.1's wgmma lowering rejects the strided array itself, earlier ones fail slicing it)."""
    return STRIDED_MESSAGE.format(jax=RULE.installed_template().split(" / ", 1)[1])

RULE = Rule(
    code="WG035",
    name="wgmma-lhs-register-layout",
    apis=("plgpu.wgmma",),
    summary="Under Lane semantics a WGMMA lhs in registers must have the WGMMA layout.",
    template="{array.mlir_dtype} / Only arrays with tiled layouts can be sliced",
    version_templates=((">=0.12.1", "{array.mlir_dtype} / Unsupported A register array layout"),),
    exception="NotImplementedError",
    jax_source="jax/experimental/mosaic/gpu/fragmented_array.py (optimization_barrier of a splat), "
               "reached from mosaic/gpu/wgmma.py: wgmma",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=fixes,
    catalog_rows=(30, 32),
    table_message="`NotImplementedError: bf16` / `Only arrays with tiled layouts can be sliced`; wgmma-lsp says "
                  "the lhs needs the WGMMA layout",
    fix_summary="`plgpu.layout_cast(x, plgpu.Layout.WGMMA)`",
    semantics=("lane",),
)

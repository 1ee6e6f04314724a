"""WG053 swizzle-value: a SwizzleTransform of a size other than 32, 64 or 128 bytes."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG053",
    name="swizzle-value",
    apis=("plgpu.SwizzleTransform",),
    summary="plgpu.SwizzleTransform accepts 32, 64 and 128 (bytes) only; find_swizzle may return 16.",
    template="Swizzle {self.swizzle} is not supported. Only 32, 64 and 128 are accepted.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: SwizzleTransform.__post_init__",
    stage="construct",
    doc_file=doc_path(__file__),
    catalog_rows=(89, 106),
)

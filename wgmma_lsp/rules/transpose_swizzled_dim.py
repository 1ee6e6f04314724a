"""WG101 transpose-swizzled-dim: JAX 0.10, Lane: loading or storing through a transposed view of a
swizzled SMEM ref that moves its swizzled (minor) dimension."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Can't transpose the swizzled dimension."

RULE = Rule(
    code="WG101",
    name="transpose-swizzled-dim",
    apis=("plgpu.transpose_ref", "plgpu.SwizzleTransform"),
    summary="Lane (JAX 0.10): a plain load or store through a transposed view of a swizzled SMEM ref "
            "that moves its minor, swizzled dimension.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: UnswizzleRef.commute_transpose",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(93,),
)

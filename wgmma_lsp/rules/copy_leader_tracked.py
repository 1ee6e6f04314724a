"""WG051 copy-leader-tracked: `leader_tracked=` without `collective_axes=` in a GMEM->SMEM copy."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "`collective_axes` must be specified when `leader_tracked` is set"

RULE = Rule(
    code="WG051",
    name="copy-leader-tracked",
    apis=("plgpu.copy_gmem_to_smem",),
    summary="copy_gmem_to_smem(leader_tracked=...) is a collective copy: it needs collective_axes=.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: copy_gmem_to_smem",
    doc_file=doc_path(__file__),
    catalog_rows=(74,),
)

"""WG067 tmem-transpose: plgpu.transpose_ref on a TMEM ref."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Can't transpose a TMEM reference."

RULE = Rule(
    code="WG067",
    name="tmem-transpose",
    apis=("plgpu.transpose_ref",),
    summary="TMEM refs cannot be transposed with plgpu.transpose_ref.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: transpose_ref",
    doc_file=doc_path(__file__),
    catalog_rows=(65,),
)

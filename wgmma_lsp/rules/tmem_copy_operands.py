"""WG116 tmem-copy-operands: `plgpu.async_copy_smem_to_tmem(smem, tmem)` between refs of another
dtype or shape."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG116",
    name="tmem-copy-operands",
    apis=("plgpu.async_copy_smem_to_tmem",),
    summary="async_copy_smem_to_tmem copies between refs of one dtype and one shape.",
    template="Expected SMEM element type ({smem_aval.dtype}) to equal the TMEM element type "
             "({tmem_aval.dtype}) / Expected SMEM reference shape {smem_aval.shape} to equal the "
             "TMEM reference shape {tmem_aval.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _async_copy_smem_to_tmem_abstract_eval",
    doc_file=doc_path(__file__),
    table_message="`Expected SMEM reference shape (128, 32) to equal the TMEM reference shape "
                  "(128, 64)` (or the element types)",
)

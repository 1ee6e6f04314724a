"""WG115 tmem-collective-mixed: a kernel that allocates both collective and non-collective TMEM."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Can't mix collective and non-collective TMEM allocations within the same kernel."

RULE = Rule(
    code="WG115",
    name="tmem-collective-mixed",
    apis=("plgpu.TMEM", "plgpu.kernel"),
    summary="A kernel's TMEM allocations must be all collective or all non-collective.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: lower_pipelined_jaxpr_to_module (the "
               "kernel's TMEM, from _estimate_resources)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
)

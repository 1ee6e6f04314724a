"""WG065 mma-barrier-orders-tensor-core: a tcgen05 MMA or commit arriving on an ordinary barrier."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "MMA barrier must have orders_tensor_core set to True."

RULE = Rule(
    code="WG065",
    name="mma-barrier-orders-tensor-core",
    apis=("plgpu.tcgen05_mma", "plgpu.tcgen05_commit_arrive"),
    summary="Barriers that tcgen05_mma / tcgen05_commit_arrive arrive on need orders_tensor_core=True.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _tcgen05_mma_abstract_eval, "
               "_tcgen05_commit_arrive_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(51, 52),
)

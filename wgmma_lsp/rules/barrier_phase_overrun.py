"""WG208 barrier-phase-overrun: a barrier completes a second phase before the first is waited for."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG208",
    name="barrier-phase-overrun",
    apis=("plgpu.Barrier", "plgpu.copy_gmem_to_smem", "plgpu.barrier_arrive"),
    summary="Arrivals complete two phases of a barrier before the kernel waits for the first.",
    template="this arrival on {barrier} completes a second phase (num_arrivals={n}) before the wait for "
             "phase {phase}: that phase is never observed",
    exception="",  # on the GPU a lost phase; jax 0.12's interpret mode raises a ValueError
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: Barrier.arrive",
    stage="hazard",
    doc_file=doc_path(__file__),
    table_message="(ours) `this arrival on … completes a second phase (num_arrivals=…) before the wait for phase …`",
)

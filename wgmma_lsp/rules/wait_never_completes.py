"""WG209 wait-never-completes: a barrier_wait whose phase never gets its num_arrivals arrivals."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG209",
    name="wait-never-completes",
    apis=("plgpu.barrier_wait", "plgpu.Barrier"),
    summary="A barrier_wait waits for a phase that fewer than num_arrivals arrivals reach: it hangs.",
    template="this wait on {barrier} never returns: only {got} of the num_arrivals={n} arrivals of "
             "phase {phase} happen before it, and nothing else can arrive while the kernel waits",
    exception="",  # not an exception: the kernel hangs (so does jax's interpret mode)
    jax_source="jax/_src/pallas/mosaic_gpu/interpret/shared_memory.py: Barrier.wait",
    stage="hazard",
    doc_file=doc_path(__file__),
    table_message="(ours) `this wait on … never returns: only … of the num_arrivals=… arrivals of phase … happen before it …`",
)

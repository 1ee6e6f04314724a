"""WG094 loop-carry-type: a `lax.fori_loop` body (or a pipeline body with a carry: JAX's
pipelines loop with a fori_loop) returns a carry whose types differ from the carry it was given
(an accumulator cast to bfloat16 inside the loop, a reshaped value)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

FIRST_LINE = "scan body function carry input and carry output must have equal types, but they differ:"

RULE = Rule(
    code="WG094",
    name="loop-carry-type",
    apis=("lax.fori_loop", "plgpu.emit_pipeline", "plgpu.emit_pipeline_warp_specialized"),
    summary="A lax.fori_loop body (or a pipeline body with a carry) must return its carry with the "
            "types it was given.",
    template=FIRST_LINE + "\n\nThe input carry component loop_carry{path} has type {in_aval} but the "
             "corresponding output carry component has type {out_aval}, so {what} do not match.\n\n"
             "Revise the function so that all output types match the corresponding input types.",
    exception="TypeError",
    jax_source="jax/_src/lax/control_flow/loops.py: fori_loop (static bounds: scan; traced: while_loop) "
               "and _check_carry_type",
    doc_file=doc_path(__file__),
    table_message="`scan body function carry input and carry output must have equal types, but they differ: …`",
)

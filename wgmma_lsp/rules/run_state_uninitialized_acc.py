"""WG076 run-state-uninitialized-acc: pl.run_state given plgpu.ACC(shape) instead of plgpu.ACC.init(x)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG076",
    name="run-state-uninitialized-acc",
    apis=("pl.run_state", "plgpu.ACC"),
    summary="pl.run_state(f)(...) needs initial values: plgpu.ACC.init(x), not plgpu.ACC(shape).",
    # JAX raises a bare `NotImplementedError` (no message): this is the failing statement.
    template="raise NotImplementedError",
    exception="NotImplementedError",
    jax_source="jax/_src/state/discharge.py: _run_state_abstract_eval",
    doc_file=doc_path(__file__),
    catalog_rows=(67,),
    table_message="`pl.run_state needs initial values, but plgpu.ACC(...) is an accumulator type with "
                  "no value: …` (JAX: a bare `NotImplementedError`)",
)

"""WG107 mma-accumulator-dtype: Ampere's `plgpu.mma` of floating operands into an accumulator that
is not float64, float32 or float16 (JAX 0.12)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG107",
    name="mma-accumulator-dtype",
    apis=("plgpu.mma",),
    summary="plgpu.mma of floating operands accumulates in float32, float16 or float64.",
    template="Only float64, float32 and float16 accumulators supported for floating operands. Got {acc.dtype}",
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _mma_abstract_eval (JAX 0.12)",
    doc_file=doc_path(__file__),
    table_message="`Only float64, float32 and float16 accumulators supported for floating operands. Got …` "
                  "(JAX 0.12, `plgpu.mma`)",
)

"""WG108 mma-integer-accumulator: Ampere's `plgpu.mma` of integer or boolean operands into an
accumulator that is not int32 (JAX 0.12)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG108",
    name="mma-integer-accumulator",
    apis=("plgpu.mma",),
    summary="plgpu.mma of integer or boolean operands accumulates in int32.",
    template="Only int32 accumulator supported for integer and boolean operands. Got {acc.dtype}",
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _mma_abstract_eval (JAX 0.12)",
    doc_file=doc_path(__file__),
    table_message="`Only int32 accumulator supported for integer and boolean operands. Got …` "
                  "(JAX 0.12, `plgpu.mma`)",
)

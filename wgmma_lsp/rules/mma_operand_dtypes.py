"""WG106 mma-operand-dtypes: Ampere's `plgpu.mma` with operands of two dtypes (JAX 0.12)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG106",
    name="mma-operand-dtypes",
    apis=("plgpu.mma",),
    summary="plgpu.mma operands must share one dtype.",
    template="Operand dtypes must match: {a.dtype} != {b.dtype}",
    exception="TypeError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _mma_abstract_eval (JAX 0.12)",
    doc_file=doc_path(__file__),
    table_message="`Operand dtypes must match: … != …` (JAX 0.12, `plgpu.mma`)",
)

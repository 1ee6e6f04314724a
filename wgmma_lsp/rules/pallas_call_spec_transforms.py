"""WG109 pallas-call-spec-transforms: a `plgpu.BlockSpec(transforms=...)` given to `pl.pallas_call`
in JAX 0.12.1 and later, which fail a bare assert on it."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

#: The failing statement (JAX raises `AssertionError` with no message).
ASSERT = "assert not self.transforms"

MESSAGE = ("plgpu.BlockSpec transforms are not supported by pl.pallas_call in this JAX: put them on "
           "SMEM scratch (plgpu.SMEM(shape, dtype, transforms=...)) in a plgpu.kernel, or on the "
           f"block specs of plgpu.emit_pipeline (JAX: AssertionError from `{ASSERT}`)")

RULE = Rule(
    code="WG109",
    name="pallas-call-spec-transforms",
    apis=("plgpu.BlockSpec", "pl.pallas_call"),
    summary="plgpu.BlockSpec(transforms=...) in a pl.pallas_call: JAX 0.12.1 and later reject it.",
    template=ASSERT,
    exception="AssertionError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: BlockSpec.to_block_mapping (>= 0.12.1)",
    doc_file=doc_path(__file__),
    table_message="`plgpu.BlockSpec transforms are not supported by pl.pallas_call in this JAX: …` "
                  "(JAX >= 0.12.1: a bare `AssertionError`)",
)

"""WG105 mma-shapes: the accumulator and operand shapes of Ampere's `plgpu.mma` do not chain (JAX 0.12)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG105",
    name="mma-shapes",
    apis=("plgpu.mma",),
    summary="plgpu.mma needs acc (M, N), a (M, K) and b (K, N).",
    template="Incompatible shapes for matrix multiplication: lhs={a.shape}, rhs={b.shape}, acc={acc.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _mma_abstract_eval (JAX 0.12)",
    doc_file=doc_path(__file__),
    table_message="`Incompatible shapes for matrix multiplication: lhs=…, rhs=…, acc=…` (JAX 0.12, `plgpu.mma`)",
)

"""WG005 wgmma-shapes: the accumulator and operand shapes of `plgpu.wgmma` do not chain."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.base import doc_path

RULE = Rule(
    code="WG005",
    name="wgmma-shapes",
    summary="plgpu.wgmma needs acc (M, N), lhs (M, K) and rhs (K, N).",
    template="Incompatible shapes for matrix multiplication: lhs={a.shape}, rhs={b.shape=}, acc={acc.shape}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma",
    doc_file=doc_path(__file__),
    catalog_rows=(1,),
    table_message='`Incompatible shapes for matrix multiplication: lhs=…, rhs=b.shape=…, acc=…`',
)

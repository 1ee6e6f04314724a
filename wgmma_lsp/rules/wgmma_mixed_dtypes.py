"""WG006 wgmma-mixed-dtypes: `plgpu.wgmma` operands of different dtypes."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.base import doc_path

RULE = Rule(
    code="WG006",
    name="wgmma-mixed-dtypes",
    apis=("plgpu.wgmma",),
    summary="plgpu.wgmma operands must share one dtype.",
    template="Mixed input dtypes for matrix multiplication unsupported: lhs={a.dtype}, rhs={b.dtype}",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma",
    doc_file=doc_path(__file__),
    catalog_rows=(2, 108),
    table_message='`Mixed input dtypes for matrix multiplication unsupported: lhs=…, rhs=…`',
)

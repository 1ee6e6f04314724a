"""WG112 wgmma-operand-rank: an accumulator or operand of `plgpu.wgmma` (or `plgpu.tcgen05_mma`)
that is not 2-D. Both unpack each shape first (`m, n = acc.shape`, `m2, k = a.shape`,
`k2, n2 = b.shape`): Python's own `ValueError` before any of JAX's checks."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG112",
    name="wgmma-operand-rank",
    apis=("plgpu.wgmma", "plgpu.tcgen05_mma"),
    summary="plgpu.wgmma and plgpu.tcgen05_mma take a 2-D accumulator and 2-D operands (a 3-D "
            "SMEM tile must be collapsed or indexed first).",
    template="too many values to unpack (expected 2)",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: wgmma, tcgen05_mma (`m, n = acc.shape`, "
               "`m2, k = a.shape`, `k2, n2 = b.shape`)",
    doc_file=doc_path(__file__),
    table_message="`too many values to unpack (expected 2)` / `not enough values to unpack "
                  "(expected 2, got 1)` (Python's)",
)

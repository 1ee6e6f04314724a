"""WG121 transfer-plan: JAX 0.12: an array in the WGMMA register layout (an accumulator's value,
cast or not) stored straight to a GMEM ref whose threads' accesses would not cover whole 32-byte
sectors (16-bit and 8-bit elements) or 128-byte cache lines, or (Lane) to an SMEM buffer without
transforms where no plan avoids bank conflicts."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import replace, text_of

SECTORS = "GMEM transfer does not access a whole number of complete 32 byte sectors"
CACHE_LINES = "GMEM transfer does not access a whole number of complete 128 byte cache lines"
NARROW = "GMEM transfer width ({transfer_bytes} bytes/thread) is smaller than 4 bytes"
BANK_CONFLICTS = "Failed to synthesize a transfer pattern that avoids bank conflicts"


def fixes(finding: Finding, source: str) -> list[Fix]:
    """`ref[...] = value` -> `plgpu.store(ref, value, optimized=False)`: the plain (uncoalesced,
    unplanned) store JAX's `plgpu.store` documents for GMEM; `plgpu.store(ref, value)` gets
    `optimized=False`. Only a whole-ref store written as one statement on its line (the target
    and value spans the model recorded); `plgpu.store` is spelled as the file spells the module."""
    d = finding.data
    title = "Store without the optimized transfer plan (plgpu.store(..., optimized=False))"
    if d.get("insert_at") is not None:  # plgpu.store(ref, value): the keyword added
        return [replace(title, d["insert_at"], ", optimized=False", preferred=True)]
    stmt, target, value = d.get("stmt_span"), d.get("target_span"), d.get("value_span")
    if stmt is None or target is None or value is None or d.get("plgpu") is None:
        return []
    text = f"{d['plgpu']}.store({text_of(source, target)}, {text_of(source, value)}, optimized=False)"
    return [replace(title, stmt, text, preferred=True)]


RULE = Rule(
    code="WG121",
    name="transfer-plan",
    apis=("plgpu.store",),
    summary="JAX 0.12: a WGMMA-layout array stored straight to GMEM must cover whole 32-byte sectors "
            "(16- and 8-bit values do not), and one stored to untransformed SMEM (Lane) must avoid bank "
            "conflicts: stage it through transformed SMEM or store it unoptimized.",
    template=f"{SECTORS} / {CACHE_LINES} / {NARROW} / {BANK_CONFLICTS}",
    exception="TransferPlanDerivationError",
    jax_source="jax/experimental/mosaic/gpu/fragmented_array.py: plan_gmem_transfer, plan_tiled_transfer "
               "(JAX 0.12)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    fixes=fixes,
    checked_last=True,  # Lane: in body order; Warpgroup: the last pass (after layout inference)
    table_message="`GMEM transfer does not access a whole number of complete 32 byte sectors` (JAX 0.12; "
                  "also `… 128 byte cache lines`, `GMEM transfer width (2 bytes/thread) is smaller than 4 "
                  "bytes`; untransformed SMEM, Lane: `Failed to synthesize a transfer pattern that avoids bank "
                  "conflicts`)",
    fix_summary="plgpu.store(..., optimized=False)",
)

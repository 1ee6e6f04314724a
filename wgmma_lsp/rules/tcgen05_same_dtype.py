"""WG079 tcgen05-same-dtype: Lane: tcgen05_mma operands of different element types."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG079",
    name="tcgen05-same-dtype",
    apis=("plgpu.tcgen05_mma",),
    summary="Lane: tcgen05_mma operands of different element types.",
    # Lane: tcgen05.py's check; Warpgroup: the mosaic_gpu.tcgen05_mma op verifier, on the MMA's line.
    template="MMA requires A and B to have the same element type, got: {element_type2} and {element_type} / "
             "'mosaic_gpu.tcgen05_mma' op The `a` and `b` inputs must have the same element type.",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/tcgen05.py: mma",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    catalog_rows=(58,),
    # 0.12 accepts the e4m3/e5m2 FP8 pair (as wgmma does) and says so.
    version_templates=((">=0.12", "MMA requires A and B to have the same element type, except that FP8 types "
                                  "(f8E4M3FN and f8E5M2) may be mixed; got: {a_element_type} and "
                                  "{b_element_type} / 'mosaic_gpu.tcgen05_mma' op The `a` and `b` inputs must "
                                  "have the same element type, except that FP8 types (f8E4M3FN and f8E5M2) may "
                                  "be mixed."),),
)

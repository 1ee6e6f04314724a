"""WG085 strided-elements: Lane: an untransformed SMEM block loaded or stored whole must hold a
multiple of 128 elements (a pallas_call block smaller than the warpgroup)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG085",
    name="strided-elements",
    apis=("pl.pallas_call", "pl.BlockSpec"),
    summary="Lane: a pallas_call SMEM block loaded or stored whole must hold a multiple of 128 elements.",
    template=("{ref_ty} must have a number of elements that is a multiple of {WARPGROUP_SIZE} "
              "(got {math.prod(shape)})"),
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/fragmented_array.py: FragmentedArray.load_strided / store_untiled",
    stage="lower",
    semantics=("lane",),
    doc_file=doc_path(__file__),
    table_message="memref<…> must have a number of elements that is a multiple of 128 (got {n})",
    fix_summary="a larger block, or plgpu.kernel with explicit copies",
)

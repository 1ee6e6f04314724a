"""WG120 tmem-transposed-view: `plgpu.async_load_tmem` / `plgpu.async_store_tmem` on a transposed
view of a TMEM ref (`tmem.T`), which the lowering cannot handle."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

#: JAX 0.12.1's words (`_handle_transforms` refuses the transpose itself).
TRANSPOSE_NOT_ALLOWED = "TMEM transpose not allowed."

RULE = Rule(
    code="WG120",
    name="tmem-transposed-view",
    apis=("plgpu.async_load_tmem", "plgpu.async_store_tmem"),
    summary="TMEM refs have no transposed views: load and store them untransposed.",
    template="Unimplemented transforms for TMEM refs. transforms={transforms}",
    version_templates=((">=0.12.1", TRANSPOSE_NOT_ALLOWED),),
    exception="NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/primitives.py: _async_load_tmem_lowering_rule, "
               "_async_store_tmem_lowering_rule (0.12.1: lowering.py _handle_transforms)",
    stage="lower",
    semantics=("lane", "warpgroup"),
    doc_file=doc_path(__file__),
    table_message="`Unimplemented transforms for TMEM refs. transforms=[TransposeTransform(permutation=(1, "
                  "0))]` (0.12.1: `TMEM transpose not allowed.`)",
)


def message(permutation: tuple[int, ...]) -> str:
    """The installed JAX's words for a view with one transpose by `permutation`."""
    if RULE.installed_template() == TRANSPOSE_NOT_ALLOWED:
        return TRANSPOSE_NOT_ALLOWED
    return f"Unimplemented transforms for TMEM refs. transforms=[TransposeTransform(permutation={permutation})]"

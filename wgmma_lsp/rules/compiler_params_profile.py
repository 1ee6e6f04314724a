"""WG055 compiler-params-profile: profile_space without profile_dir, or the other way round."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

MESSAGE = "Either both profile_space and profile_dir must be set, or neither."

RULE = Rule(
    code="WG055",
    name="compiler-params-profile",
    apis=("plgpu.CompilerParams",),
    summary="plgpu.CompilerParams: profile_space and profile_dir go together.",
    template=MESSAGE,
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: CompilerParams.__post_init__",
    stage="construct",
    doc_file=doc_path(__file__),
    catalog_rows=(69,),
)

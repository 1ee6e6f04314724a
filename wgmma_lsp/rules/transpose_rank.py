"""WG096 transpose-rank: a ref transposed by a permutation whose length is not the ref's rank."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG096",
    name="transpose-rank",
    apis=("plgpu.transpose_ref",),
    summary="plgpu.transpose_ref / ref.transpose with a permutation whose length is not the ref's rank.",
    template="Permutation {self.permutation} does not match the rank of the type ({x.ndim})",
    exception="ValueError",
    jax_source="jax/_src/state/types.py: TransposeTransform.transform_type",
    doc_file=doc_path(__file__),
    catalog_rows=(92,),
)


def message(permutation: tuple[int, ...], rank: int) -> str:
    """JAX's message for `permutation` (a tuple, printed as Python does) on a ref of `rank` dims."""
    return f"Permutation {permutation} does not match the rank of the type ({rank})"

"""WG071 tma-element-type: Lane: a TMA copy between refs of different element types."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, text_of
from wgmma_lsp.spans import Span


_DTYPE_WORDS = ("float", "bfloat", "int", "uint", "bool", "complex")  # `jnp.bfloat16`, `np.int8`


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Allocate the SMEM buffer with the GMEM array's dtype (the rule's documented fix): rewrite
    the dtype of the `X.SMEM(shape, dtype, ...)` that made it, written on one line with the dtype
    spelled out (not a parameter of a helper that allocates for several callers)."""
    d = finding.data
    span, needed, jnp = d.get("alloc_span"), d.get("needed"), d.get("jnp")
    if span is None or not needed or not jnp or span.line != span.end_line:
        return []
    text = text_of(source, span)
    parsed = parse_call(text)
    if parsed is None:
        return []
    node, _ = parsed
    if not isinstance(node.func, ast.Attribute) or node.func.attr != "SMEM":
        return []
    dtype = node.args[1] if len(node.args) >= 2 else next(
        (k.value for k in node.keywords if k.arg == "dtype"), None)
    # Only a dtype written there (`jnp.bfloat16`, "bfloat16"): one a helper receives as a
    # parameter is its callers' to change, not the helper's.
    literal = isinstance(dtype, ast.Attribute) and dtype.attr.startswith(_DTYPE_WORDS) \
        or isinstance(dtype, ast.Constant) and isinstance(dtype.value, str)
    if dtype is None or dtype.end_col_offset is None or not literal:
        return []
    start = span.col + (len(text) - len(text.lstrip())) + dtype.col_offset
    end = span.col + (len(text) - len(text.lstrip())) + dtype.end_col_offset
    return [Fix(f"Allocate the SMEM buffer as {needed}, the GMEM array's dtype",
                (TextEdit(Span(span.line, start, span.line, end), f"{jnp}.{needed}"),), True)]


RULE = Rule(
    code="WG071",
    name="tma-element-type",
    apis=("plgpu.copy_gmem_to_smem", "plgpu.copy_smem_to_gmem"),
    summary="Lane: a TMA copy between refs of different element types.",
    template="Expected same element type, got {element_type} and {dst_ref_ty.element_type}",
    exception="ValueError",
    jax_source="jax/experimental/mosaic/gpu/launch_context.py: LaunchContext.async_copy",
    stage="lower",
    version_stages=((">=0.12", "trace"),),  # 0.12's copy primitive checks it while tracing
    semantics=("lane",),
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="allocate the SMEM buffer with the GMEM array's dtype",
    # 0.12 checks it while tracing the copy, in its own words (models/copy_checks.py).
    version_templates=((">=0.12", "Expected dtypes to match but src had type {src_ref.dtype} and dst had type "
                                  "{dst_ref.dtype}"),),
    catalog_rows=(76,),
)

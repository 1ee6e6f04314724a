"""WG092 transpose-ref-traced: `plgpu.transpose_ref(ref, perm)` on a kernel ref, where the
installed JAX (0.12 on) makes a traced value's `.memory_space` raise: transpose_ref's
`hasattr(ref, "memory_space")` then fails. `ref.transpose(perm)` works on every version."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import method_call, text_of


def use_ref_transpose(finding: Finding, source: str) -> list[Fix]:
    d = finding.data
    call_span, ref_span, perm_span = d.get("call_span"), d.get("ref_span"), d.get("perm_span")
    if call_span is None or ref_span is None or perm_span is None:
        return []
    new = method_call(text_of(source, ref_span), f"transpose({text_of(source, perm_span)})")
    return [Fix(f"Transpose the ref itself: `{new}`", (TextEdit(call_span, new),), True)]


RULE = Rule(
    code="WG092",
    name="transpose-ref-traced",
    apis=("plgpu.transpose_ref",),
    summary="plgpu.transpose_ref fails on kernel refs in this JAX (0.12+): use ref.transpose(perm).",
    template="The 'memory_space' attribute is not available on traced array with shape {aval}. "
             "Use `jax.typeof(x).memory_space` instead.",
    fix_summary="`ref.transpose(perm)`",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/core.py: transpose_ref; jax/_src/core.py: Tracer.memory_space",
    doc_file=doc_path(__file__),
    fixes=use_ref_transpose,
)

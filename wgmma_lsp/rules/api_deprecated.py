"""WG095 api-deprecated: a parameter the installed JAX deprecates (it warns, and still runs).

What is deprecated, JAX's message and the replacement are read from the installed jax's source
(interpret/jax_deprecations.py): `plgpu.kernel(out_shape=...)` on JAX 0.10 warns "The out_shape
and scratch_shapes arguments to plgpu.kernel are deprecated. Use out_type and scratch_types
instead." (0.12 removed it: WG090). The fix renames the keyword to the parameter it aliases.
"""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fix_preview import corrected_call
from wgmma_lsp.spans import Span


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Every deprecated alias of the call passed under its new name, when each has one the
    installed JAX takes and that the call does not pass already. `data` (models/jax_api.py):
    api, given (the call's keywords), uses [(param, alias, edit span, "keyword"|"positional")]."""
    d = finding.data
    api = d.get("api")
    sig = jax_source.signature(api) if api else None
    if sig is None:
        return []
    takes = {p.name for p in sig.params if p.kind in ("pos", "kwonly")}
    edits, names = [], []
    for param, alias, span, kind in d.get("uses", ()):
        if not alias or alias not in takes or alias in d.get("given", ()) or span is None:
            return []
        if kind == "keyword":
            edits.append(TextEdit(span, alias))
        else:
            edits.append(TextEdit(Span(span.line, span.col, span.line, span.col), f"{alias}="))
        names.append(f"`{param}=` → `{alias}=`" if kind == "keyword" else f"`{alias}=`")
    if not edits:
        return []
    call = corrected_call(source, d.get("call_span"), edits)
    return [Fix(f"Use JAX's replacement: {f'`{call}`' if call else ', '.join(names)}", tuple(edits), True)]


RULE = Rule(
    code="WG095",
    name="api-deprecated",
    summary="A parameter the installed JAX deprecates (JAX warns with a DeprecationWarning; a later "
            "JAX removes it).",
    template="{JAX's deprecation message, read from the installed jax}",
    table_message="`The out_shape and scratch_shapes arguments to plgpu.kernel are deprecated. Use out_type and scratch_types instead.` (JAX 0.10; read from the installed jax)",
    fix_summary="the parameter it aliases (`out_shape=` → `out_type=`)",
    exception="DeprecationWarning",
    jax_source="the installed jax: `deprecations.warn`/`warnings.warn(..., DeprecationWarning)` under a test of the parameter",
    stage="deprecation",
    doc_file=doc_path(__file__),
    fixes=fixes,
)

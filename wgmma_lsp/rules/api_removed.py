"""WG091 api-removed: a `plgpu.*`/`pl.*` name the installed JAX does not have (removed, or not
added yet), read from the installed jax's own `jax/experimental/pallas[/mosaic_gpu].py`."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import method_call
from wgmma_lsp.spans import LineIndex, Span


def _call_at(source: str, func: Span) -> tuple[ast.Call, LineIndex] | None:
    """The call whose callee is the expression at `func` (the finding's span)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = LineIndex(source)
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and lines.span(n.func)[:2] == (func.line, func.col)), None)
    return (call, lines) if call is not None else None


def use_ref_transpose(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.transpose_ref(ref, perm)` where JAX removed it (0.12.1): `ref.transpose(perm)`, what
    JAX's removal message asks for and every supported JAX takes."""
    if finding.data.get("api") != "plgpu.transpose_ref" or finding.span is None:
        return []
    found = _call_at(source, finding.span)
    if found is None:
        return []
    call, lines = found
    if len(call.args) != 2 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    ref, perm = (lines.text(lines.span(a)) for a in call.args)
    new = method_call(ref, f"transpose({perm})")
    return [Fix(f"Transpose the ref itself: `{new}`", (TextEdit(lines.span(call), new),), True)]


RULE = Rule(
    code="WG091",
    name="api-removed",
    summary="The name is not in the installed JAX's jax.experimental.pallas[.mosaic_gpu] "
            "(removed, or newer than this JAX).",
    template="module {module!r} has no attribute {name!r}",
    table_message="`module 'jax.experimental.pallas.mosaic_gpu' has no attribute 'transform_ref'` / JAX's removal message (`pl.dot was deprecated in JAX v0.11.0, and removed …`)",
    fix_summary="`plgpu.transpose_ref(ref, perm)` → `ref.transpose(perm)` (JAX 0.12.1)",
    exception="AttributeError",
    jax_source="the installed jax: jax/experimental/pallas/mosaic_gpu.py, jax/experimental/pallas/__init__.py (_deprecations)",
    doc_file=doc_path(__file__),
    fixes=use_ref_transpose,
)

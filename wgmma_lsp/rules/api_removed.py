"""WG091 api-removed: a `plgpu.*`/`pl.*` name the installed JAX does not have (removed, or not
added yet), read from the installed jax's own `jax/experimental/pallas[/mosaic_gpu].py`."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import method_call
from wgmma_lsp.spans import Span


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def _call_at(source: str, func: Span) -> ast.Call | None:
    """The call whose callee is the expression at `func` (the finding's span)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    lines = source.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.func.lineno - 1 == func.line \
                and node.func.lineno <= len(lines) \
                and _char_col(lines[node.func.lineno - 1], node.func.col_offset) == func.col:
            return node
    return None


def use_ref_transpose(finding: Finding, source: str) -> list[Fix]:
    """`plgpu.transpose_ref(ref, perm)` where JAX removed it (0.12.1): `ref.transpose(perm)`, what
    JAX's removal message asks for and every supported JAX takes."""
    if finding.data.get("api") != "plgpu.transpose_ref" or finding.span is None:
        return []
    call = _call_at(source, finding.span)
    if call is None or len(call.args) != 2 or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    ref, perm = (ast.get_source_segment(source, a) for a in call.args)
    if ref is None or perm is None or call.end_lineno is None or call.end_col_offset is None:
        return []
    lines = source.splitlines()
    span = Span(call.lineno - 1, _char_col(lines[call.lineno - 1], call.col_offset),
                call.end_lineno - 1, _char_col(lines[call.end_lineno - 1], call.end_col_offset))
    new = method_call(ref, f"transpose({perm})")
    return [Fix(f"Transpose the ref itself: `{new}`", (TextEdit(span, new),), True)]


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

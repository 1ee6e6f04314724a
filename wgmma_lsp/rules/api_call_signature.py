"""WG090 api-call-signature: a `pl.*`/`plgpu.*` call the installed JAX's signature rejects.

The parameters are read from the installed jax's own source (interpret/jax_source.py), so the
rule follows the user's JAX version: `plgpu.kernel(out_shape=...)` is fine on JAX 0.10 (a
deprecated alias) and a `TypeError` on 0.12; `plgpu.load(ref, idx)` is 0.10's form, 0.12's is
`plgpu.load(ref.at[idx])`. The message is CPython's own binding error.
"""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fix_preview import corrected_call
from wgmma_lsp.rules.fixes_common import method_call, text_of
from wgmma_lsp.spans import Span

#: Keywords JAX renamed: (API, old keyword) -> new keyword. A fix is offered only when the
#: installed JAX takes the new keyword.
RENAMED_KEYWORDS = {
    ("plgpu.kernel", "out_shape"): "out_type",
    ("plgpu.kernel", "scratch_shapes"): "scratch_types",
}


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Migrations between JAX versions, each only where the installed JAX takes the result.
    `data` (filled by models/jax_api.py): api, kind, names, keyword_spans {name: span of the
    keyword's name}, arg_spans [span of each positional argument]."""
    d = finding.data
    api, kind = d.get("api"), d.get("kind")
    sig = jax_source.signature(api) if api else None
    if sig is None:
        return []
    takes = {p.name for p in sig.params if p.kind in ("pos", "kwonly")}
    keyword_spans: dict[str, Span] = d.get("keyword_spans", {})
    args: list[Span | None] = d.get("arg_spans", [])
    out: list[Fix] = []

    def shown(edits: tuple[TextEdit, ...], fallback: str) -> str:
        """The corrected call, in the installed JAX's API (the help text shows it)."""
        call = corrected_call(source, d.get("call_span"), edits)
        return f"`{call}`" if call else fallback

    if kind == "unexpected-keyword":
        edits = [TextEdit(span, new) for k, span in keyword_spans.items()
                 if (new := RENAMED_KEYWORDS.get((api, k))) and new in takes and new not in keyword_spans]
        if edits:
            names = ", ".join(f"`{e.new_text}=`" for e in edits)
            out.append(Fix(f"Use this JAX's keyword{'s' if len(edits) > 1 else ''}: "
                           f"{shown(tuple(edits), names)}", tuple(edits), True))
    elif kind == "too-many-positional" and api == "plgpu.kernel" and len(args) == 2 and args[1] \
            and "out_type" in takes and "out_type" not in keyword_spans:
        a = args[1]
        edit = (TextEdit(Span(a.line, a.col, a.line, a.col), "out_type="),)
        out.append(Fix(f"Pass the output type as `out_type=`: {shown(edit, '`out_type=`')}", edit, True))
    elif kind == "too-many-positional" and api == "plgpu.load" and len(args) == 2 \
            and all(args) and [p.name for p in sig.params if p.kind in ("pos", "posonly")] == ["src"]:
        src, idx = args
        assert src is not None and idx is not None
        src_text, idx_text = text_of(source, src), text_of(source, idx)
        try:
            idx_node = ast.parse(idx_text.strip(), mode="eval").body
        except SyntaxError:
            return out
        if isinstance(idx_node, ast.Tuple) and not idx_node.elts or \
                isinstance(idx_node, ast.Constant) and idx_node.value is Ellipsis:
            new = src_text  # the whole ref
        else:
            inner = idx_text.strip()
            if isinstance(idx_node, ast.Tuple) and inner.startswith("(") and inner.endswith(")"):
                inner = inner[1:-1]
            new = f"{method_call(src_text, 'at')}[{inner}]"
        edit = (TextEdit(Span(src.line, src.col, idx.end_line, idx.end_col), new),)
        out.append(Fix(f"Load from the ref view: {shown(edit, f'`plgpu.load({new}, ...)`')}", edit, True))
    elif kind == "missing-positional" and api == "plgpu.load" and tuple(d.get("names", ())) == ("idx",) \
            and len(args) == 1 and args[0]:
        a = args[0]
        edit = (TextEdit(Span(a.end_line, a.end_col, a.end_line, a.end_col), ", ()"),)
        out.append(Fix(f"Load the whole ref: {shown(edit, 'pass the index `()`')}", edit, True))
    return out


RULE = Rule(
    code="WG090",
    name="api-call-signature",
    summary="A Pallas/Mosaic GPU API call does not fit the installed JAX's signature (the API "
            "moved between versions: out_shape/out_type, scratch_shapes/scratch_types, plgpu.load's index).",
    template="{function}() got an unexpected keyword argument '{name}'",
    table_message="`Mesh.__init__() got an unexpected keyword argument 'out_shape'` (any binding `TypeError`, read from the installed jax)",
    fix_summary="the installed JAX's keyword; `out_type=`; `ref.at[idx]` for `plgpu.load`",
    exception="TypeError",
    jax_source="the installed jax: the signature of the called plgpu/pl function or class",
    doc_file=doc_path(__file__),
    fixes=fixes,
)

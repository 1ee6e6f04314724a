"""Hover: the abstract value under the cursor, in JAX's spelling, and where refs were allocated.

On a diagnostic, the hover also explains the rule and lists its fixes.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from wgmma_lsp.analysis import Analysis, ValueRecord
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import HoverInfo
from wgmma_lsp.interpret.values import (
    ApiVal, RefVal,
    Value,
)
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span
from wgmma_lsp.ide.hover_text import (  # noqa: F401  (re-exported)
    _CODE_SPAN, _KIND_ORDER, _by_line, _code, describe, escape, escape_prose)


def records_at(analysis: Analysis, line: int, col: int) -> list[ValueRecord]:
    """The recorded expressions containing the position, innermost first."""
    found = [rec for rec in _by_line(analysis).get(line, ()) if rec.span.contains(line, col)]
    found.sort(key=lambda r: (_extent(r.span), _KIND_ORDER.get(r.kind, 9)))
    return found


_KEYWORD = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*=(?!=)\s*")


class _Keyword(NamedTuple):
    name: str
    value_col: int  # where its value starts, on the same line
    name_col: int


def _keyword_at(analysis: Analysis, line: int, col: int) -> _Keyword | None:
    """On the name of a call's keyword argument (`f(x, axis=1)`, the cursor on `axis`); None
    elsewhere (an assignment's target starts its statement; the caller rules out parameter
    defaults)."""
    lines = analysis.lines.lines if analysis.lines is not None else []
    if line >= len(lines):
        return None
    text = lines[line]
    for m in _KEYWORD.finditer(text):
        if m.start(1) <= col <= m.end(1):
            before = text[:m.start(1)].rstrip()
            if not before:  # a continuation line: the argument list goes on from the line above
                above = next((ln.rstrip() for ln in reversed(lines[:line]) if ln.strip()), "")
                before = above[-1:]
            if before.endswith(("(", ",")) and m.end() < len(text):
                return _Keyword(m.group(1), m.end(), m.start(1))
            return None
    return None


def _argument_records(analysis: Analysis, line: int, keyword: _Keyword) -> list[ValueRecord]:
    """The recorded expressions that are a keyword argument's whole value (starting where it
    starts, followed by `,`, `)` or their last line's end), the widest first."""
    lines = analysis.lines.lines if analysis.lines is not None else []
    value = [r for r in records_at(analysis, line, keyword.value_col)
             if r.span.line == line and r.span.col == keyword.value_col and r.span.end_line < len(lines)
             and lines[r.span.end_line][r.span.end_col:].lstrip()[:1] in ("", ",", ")")]
    return sorted(value, key=lambda r: _extent(r.span), reverse=True)


def record_at(analysis: Analysis, line: int, col: int) -> ValueRecord | None:
    """The innermost recorded expression containing the position."""
    found = records_at(analysis, line, col)
    return found[0] if found else None


def _extent(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_col - span.col if span.line == span.end_line else 10**6)


def _shown_path(path: str, relative_to: str | None) -> str:
    """Another module's file, relative to the analysed file's directory when that is shorter."""
    import os

    if not relative_to:
        return path
    rel = os.path.relpath(path, os.path.dirname(os.path.abspath(relative_to)))
    return rel if len(rel) < len(path) else path


def _allocation(v: Value, analysis: Analysis) -> str | None:
    if not isinstance(v, RefVal):
        return None
    root = v.root()
    if root.origin is None:
        return None
    transforms = v.transforms_text()
    other = getattr(root.origin, "path", None)  # allocated in another of the user's modules
    text = analysis.lines.text(root.origin) if analysis.lines and other is None else ""
    text = " ".join(text.split())
    if len(text) > 80:
        text = text[:77] + "…"
    where = f"line {root.origin.line + 1}" if other is None else f"{_shown_path(other, analysis.path)}:{root.origin.line + 1}"
    out = f"allocated at {escape(where)} by {escape(root.origin_desc)}" + (f": {_code(text)}" if text else "")
    out += f"; transforms: {escape(transforms)}" if transforms else ""
    if root.space == "default" and root.origin_desc.startswith("pallas_call") and _lowers_pallas_call():
        # models/memory_spaces.py: the lowering runs the kernel over the pipeline's SMEM buffers
        out += "; lowered in SMEM (the pallas_call pipeline's buffer: no memory_space given)"
    return out


def _lowers_pallas_call() -> bool:
    """Whether the installed JAX lowers a Mosaic GPU `pl.pallas_call` (0.10 does, 0.12 not)."""
    from wgmma_lsp.interpret.jax_source import pallas_call_lowers_mosaic_gpu

    return pallas_call_lowers_mosaic_gpu() is not False


def api_names_at(analysis: Analysis, line: int, col: int) -> list[str]:
    """The JAX API objects named at a position whose documentation jedi is to look up: those
    the installed JAX's source does not document (ide/api_docs.py)."""
    from wgmma_lsp.ide.api_docs import api_doc

    rec = record_at(analysis, line, col)
    return [v.name for v in rec.values if isinstance(v, ApiVal) and api_doc(v.name) is None] \
        if rec is not None else []


def _trim_doc(doc: str, max_lines: int = 24) -> str:
    lines = doc.strip().splitlines()
    return "\n".join(lines[:max_lines] + (["…"] if len(lines) > max_lines else []))


def _kernel_smem(analysis: Analysis, line: int, col: int) -> tuple[Span, str] | None:
    """On a `pallas_call(...)(...)`/`plgpu.kernel(...)(...)` call: the shared memory it allocates
    (models/smem_budget.py), per context when they differ."""
    hits = [(s, u) for s, u in analysis.smem.items() if s.contains(line, col)]
    if not hits:
        return None
    s, usages = min(hits, key=lambda h: (h[0].end_line - h[0].line, h[0].end_col - h[0].col))
    texts = sorted({escape_prose(u.describe()) for u in usages})
    body = texts[0] if len(texts) == 1 else "\n".join(f"- {t}" for t in texts)
    parts = sorted({escape_prose(p) for u in usages for p in u.parts})
    detail = ("\n\n" + "\n".join(f"- {p}" for p in parts)) if parts and len(parts) <= 12 else ""
    return s, f"{body}{detail}"


def _barrier_uses(analysis: Analysis, values: list) -> str | None:
    """On a barrier: the copies that arrive on it and the waits (hazards/barrier_uses.py)."""
    lines: set[str] = set()
    for v in values:
        if isinstance(v, RefVal) and v.root().origin in analysis.barriers:
            lines.update(analysis.barriers[v.root().origin].lines())
    return "\n".join(f"- {escape_prose(t)}" for t in sorted(lines)) if lines else None


def _api_help(analysis: Analysis, rec: ValueRecord, settings: Settings | None) -> str | None:
    """On a Pallas API object: its signature and docstring in the installed JAX's words, and the
    constraints the rules check for it (met or not, at a call): ide/api_help.py."""
    from wgmma_lsp.ide import api_help

    for v in rec.values:
        if isinstance(v, ApiVal):
            found = api_help.help_for(analysis, v.name, rec.span, settings)
            return api_help.markdown(found) if found is not None else None
    return None


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _api_help_from_text(analysis: Analysis, line: int, col: int, settings: Settings | None
                        ) -> tuple[Span, str] | None:
    """On a dotted name the analysis recorded nothing for (a function no entry point reaches):
    the API it names through the file's imports, documented without values."""
    from wgmma_lsp.ide import api_help
    from wgmma_lsp.ide.signature_help import canonical_callee

    lines = analysis.source.split("\n", line + 1)
    if line >= len(lines):
        return None
    for m in _DOTTED.finditer(lines[line]):
        if m.start() <= col <= m.end():
            full = m.group(0)
            end = full.find(".", col - m.start())  # up to the part under the cursor
            name = full if end < 0 else full[:end]
            canonical = canonical_callee(name, analysis.source, analysis) if "." in name else None
            found = api_help.help_for(None, canonical, None, settings) if canonical else None
            if found is None or found.doc is None:
                return None
            return Span(line, m.start(), line, m.start() + len(name)), api_help.markdown(found)
    return None


def hover(analysis: Analysis, line: int, col: int, settings: Settings | None = None,
          api_doc: Callable[[str], str | None] | None = None) -> HoverInfo | None:
    parts: list[str] = []
    span: Span | None = None
    # The innermost expression with something to show (`x.astype` alone is a bound method:
    # the call around it has the value).
    rec, shown = None, []
    contexts: dict[str, str] = {}  # a value's text -> the concrete context it was seen in
    candidates = records_at(analysis, line, col)
    keyword = _keyword_at(analysis, line, col)
    if keyword is not None and any(r.span.line == line and r.span.col >= keyword.name_col for r in candidates):
        keyword = None  # a recorded name there (a parameter's default: `def f(n=3)`)
    if keyword is not None:  # `name=` of a call: its argument's value, never the call's result
        candidates = _argument_records(analysis, line, keyword)
    for candidate in candidates[:4]:
        shown, contexts = [], {}
        for i, v in enumerate(candidate.values):
            d = describe(v)
            if d is not None and d not in shown:
                shown.append(d)
                ctx = candidate.contexts[i] if i < len(candidate.contexts) else None
                if ctx:
                    contexts[d] = ctx
        if shown:
            known = [d for d in shown if "?" not in d]
            if known and len(known) < len(shown):  # partly unknown values add nothing
                shown = known
            rec = candidate
            break
    if rec is not None:
        if shown:
            span = rec.span
            label = f"**{escape(rec.name)}**: " if rec.name else ""
            if keyword is not None:
                label = f"**{escape(keyword.name)}**=" + ("" if not rec.name or rec.name == keyword.name else label)

            def item(s: str) -> str:
                return f"{_code(s)} ({escape_prose(contexts[s])})" if s in contexts else _code(s)
            if len(shown) == 1:
                parts.append(f"{label}{item(shown[0])}")
            else:
                parts.append(f"{label}one of (depending on the call):\n" + "\n".join(f"- {item(s)}" for s in shown))
            allocs = {a for a in (_allocation(v, analysis) for v in rec.values) if a}
            parts.extend(sorted(allocs))
            uses = _barrier_uses(analysis, rec.values)
            if uses:
                parts.append(uses)
            api = _api_help(analysis, rec, settings)
            if api:
                parts.append(api)
            elif api_doc is not None:
                for v in rec.values:
                    doc = api_doc(v.name) if isinstance(v, ApiVal) else None
                    if doc:
                        parts.append("```text\n" + _trim_doc(doc) + "\n```")
                        break
    if rec is None:  # code the analysis did not reach: an API name is still documented
        unreached = _api_help_from_text(analysis, line, col, settings)
        if unreached is not None:
            span = unreached[0]
            parts.append(unreached[1])
    smem = _kernel_smem(analysis, line, col)
    if smem is not None:
        parts.append(smem[1])
        span = span or smem[0]
    for d in diagnostics(analysis, settings):
        if d.span.contains(line, col):
            span = span or d.span
            from wgmma_lsp.rules.registry import find_rule

            rule = find_rule(d.code)
            text = [f"---\n**{d.code} {escape(d.name)}** — {escape(d.message)}"]
            if rule is not None:
                text.append(escape_prose(rule.summary))
            if d.fixes:
                text.append("Fixes: " + "; ".join(f"*{escape_prose(f.title)}*" for f in d.fixes))
            if d.doc_uri:
                text.append(f"[Documentation]({d.doc_uri})")
            parts.append("\n\n".join(text))
    if not parts or span is None:
        return None
    return HoverInfo("\n\n".join(parts), span)

"""What the hover and the signature help say about a Pallas API call: the installed JAX's
signature and first docstring paragraph (ide/api_docs.py), the constraints wgmma-lsp's rules
check for that API (each rule's `apis` and summary: rules/base.py), and at a call the analysed
arguments' avals with each constraint met or not.

A constraint *fails here* when one of its rule's diagnostics lies in the call. It is met (*no
error*) when the analysis reached the call with every argument known and its rule reported
nothing in the whole document (many rules blame another call: an accumulator's shape is checked
where `pl.run_scoped` allocates it or `plgpu.wgmma` uses it). Otherwise it is not known here: an
argument not known, the call not reached, an earlier constraint of the call failing (JAX stops
at its first error), or the rule reported elsewhere, maybe because of this call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide.api_docs import ApiDoc, api_doc, summary_markdown
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.rules.base import Rule
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import LineIndex, Span

FAILS, WARNS, HOLDS, UNKNOWN = "fails", "warns", "holds", "unknown"
_MARK = {FAILS: "✗", WARNS: "⚠", HOLDS: "✓", UNKNOWN: "?"}
_ORDER = {FAILS: 0, WARNS: 1, UNKNOWN: 2, HOLDS: 3}
_LEGEND = {FAILS: "fails", WARNS: "fails on some paths", HOLDS: "no error", UNKNOWN: "not known"}
MAX_ARG_VALUES = 3  # distinct avals shown per argument (one per context)
WRAP = 80  # a signature longer than this is shown one parameter per line


def constraints(canonical: str) -> list[Rule]:
    """The rules that check calls of `canonical`, by code."""
    from wgmma_lsp.rules.registry import RULES

    return [r for r in RULES.values() if canonical in r.apis]


def _rule_apis() -> set[str]:
    """Every API a rule names (their docs are read together: one parse per defining module)."""
    from wgmma_lsp.rules.registry import RULES

    return {a for r in RULES.values() for a in r.apis}


@dataclass(frozen=True)
class Argument:
    param: str | None  # the parameter it binds to (None: none does)
    text: str  # as written
    value: str | None  # its aval(s) here; None: not known


@dataclass(frozen=True)
class Check:
    rule: Rule
    state: str  # FAILS, WARNS, HOLDS, UNKNOWN (None of them without a call)


@dataclass
class CallHelp:
    canonical: str
    doc: ApiDoc | None
    rules: list[Rule]
    arguments: list[Argument] | None = None  # None: not at an analysed call
    checks: list[Check] = field(default_factory=list)


def help_for(analysis: Analysis | None, canonical: str, callee: Span | None,
             settings: Settings | None = None) -> CallHelp | None:
    """The help for `canonical`, at the call whose callee is at `callee` when there is one in
    `analysis`; None when there is nothing to say (no documentation, no constraint)."""
    doc, rules = api_doc(canonical, prefetch=_rule_apis()), constraints(canonical)
    settings = settings or Settings()
    rules = [r for r in rules if settings.rule_enabled(r.code, r.name)]
    if doc is None and not rules:
        return None
    out = CallHelp(canonical, doc, rules)
    call = _call_at(analysis, callee) if analysis is not None and callee is not None else None
    if call is not None:
        span, node, lines = call
        out.arguments = _arguments(analysis, doc, node, lines)  # type: ignore[arg-type]
        out.checks = _checks(analysis, span, rules, out.arguments, settings)  # type: ignore[arg-type]
    return out


def _call_at(analysis: Analysis, callee: Span) -> tuple[Span, ast.Call, _Shifted] | None:
    """The analysed call `callee(...)`: its recorded span, its node (parsed from its own text),
    from the records of its line (ide/hover.py builds them once per analysis)."""
    from wgmma_lsp.ide.hover_text import _by_line

    calls = [rec.span for rec in _by_line(analysis).get(callee.line, ()) if rec.kind == "call"
             and (rec.span.line, rec.span.col) == (callee.line, callee.col)
             and (rec.span.end_line, rec.span.end_col) > (callee.end_line, callee.end_col)]
    if not calls or analysis.lines is None:
        return None
    span = min(calls, key=lambda s: (s.end_line, s.end_col))
    text = analysis.lines.text(span)
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call):
        return None
    return span, node, _Shifted(text, span)


class _Shifted:
    """Spans of nodes parsed from a call's own text, in the document's coordinates."""

    def __init__(self, text: str, at: Span) -> None:
        self.index, self.at = LineIndex(text), at

    def span(self, node: ast.AST) -> Span:
        s = self.index.span(node)
        return Span(s.line + self.at.line, s.col + (self.at.col if s.line == 0 else 0),
                    s.end_line + self.at.line, s.end_col + (self.at.col if s.end_line == 0 else 0))

    def text(self, node: ast.AST) -> str:
        return self.index.text(self.index.span(node))


def _arguments(analysis: Analysis, doc: ApiDoc | None, node: ast.Call, lines: _Shifted) -> list[Argument]:
    from wgmma_lsp.ide.hover_text import describe

    out = []
    items: list[tuple[str | None, int, ast.expr]] = [(None, i, a) for i, a in enumerate(node.args)]
    items += [(k.arg, -1, k.value) for k in node.keywords]
    for keyword, position, expr in items:
        if isinstance(expr, ast.Starred) or (keyword is None and position < 0):
            continue
        index = doc.param_index(position, keyword) if doc is not None else None
        param = doc.params[index].name if doc is not None and index is not None else keyword
        values = _values(analysis, expr, lines, describe)
        shown = " | ".join(values[:MAX_ARG_VALUES]) + (" | …" if len(values) > MAX_ARG_VALUES else "")
        out.append(Argument(param, " ".join(lines.text(expr).split()), shown or None))
    return out


def _values(analysis: Analysis, expr: ast.expr, lines: _Shifted, describe) -> list[str]:
    """The distinct avals recorded for an argument ([] when one is not known); a literal or a
    tuple of recorded names (not recorded as a whole) from its parts."""
    rec = analysis.records.get(lines.span(expr))
    if rec is None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float, str, bool, type(None))):
            return [repr(expr.value)]
        if isinstance(expr, (ast.Tuple, ast.List)) and expr.elts:
            parts = [_values(analysis, e, lines, describe) for e in expr.elts]
            if any(len(p) != 1 for p in parts):
                return []
            inner = ", ".join(p[0] for p in parts)
            return [f"[{inner}]" if isinstance(expr, ast.List) else f"({inner}{',' if len(parts) == 1 else ''})"]
        return []
    values: list[str] = []
    for v in rec.values:
        d = describe(v)
        if d is None or "?" in d:
            return []
        if d not in values:
            values.append(d)
    return values


def _checks(analysis: Analysis, call: Span, rules: list[Rule], arguments: list[Argument],
            settings: Settings) -> list[Check]:
    from wgmma_lsp.ide.diagnostics import diagnostics

    here: dict[str, str] = {}
    elsewhere: set[str] = set()  # rules reported outside the call: maybe because of its arguments
    for d in diagnostics(analysis, settings):
        if call.contains(d.span.line, d.span.col) and call.contains(d.span.end_line, d.span.end_col):
            state = FAILS if d.severity == Severity.ERROR else WARNS
            if here.get(d.code) != FAILS:
                here[d.code] = state
        else:
            elsewhere.add(d.code)
    # JAX stops at its first error: past one, the other constraints are not known to hold.
    known = all(a.value is not None for a in arguments) and FAILS not in here.values()
    checks = [Check(r, here.get(r.code, HOLDS if known and r.code not in elsewhere else UNKNOWN))
              for r in rules]
    return sorted(checks, key=lambda c: _ORDER[c.state])


# -- Markdown -----------------------------------------------------------------------------------

def signature_block(doc: ApiDoc) -> str:
    label = doc.label()[0]
    if len(label) > WRAP and doc.params:
        head, _, _ = label.partition("(")
        body = ",\n".join(f"    {t}" for t in _label_parts(doc))
        label = f"{head}(\n{body},\n){label[label.rfind(')') + 1:]}"
    return f"```python\n{label}\n```"


def _label_parts(doc: ApiDoc) -> list[str]:
    label, offsets = doc.label()
    parts, last = [], 0
    for i, (start, end) in enumerate(offsets):
        between = label[last:start].strip(", ")
        if i and between:  # the `*` and `/` markers
            parts.append(between)
        parts.append(label[start:end])
        last = end
    tail = label[last:label.rfind(")")].strip(", ")
    return parts + ([tail] if tail else [])


def markdown(h: CallHelp, with_signature: bool = True) -> str:
    """The help as hover Markdown (the signature help shows the signature as its label and the
    rest as its documentation: `with_signature=False`)."""
    from wgmma_lsp.ide.hover_text import _code, escape, escape_prose

    parts: list[str] = []
    doc = h.doc
    if doc is not None and with_signature:
        parts.append(signature_block(doc))
    if doc is not None and doc.summary:
        parts.append(summary_markdown(doc.summary))
    if doc is not None and doc.bundled:
        parts.append(f"*no JAX in the analysed environment: parameters of jax {escape(doc.jax_version or '?')} "
                     "(bundled facts)*")
    elif doc is not None:
        parts.append(f"*jax {escape(doc.jax_version or '?')}: {escape(doc.where or '')}*")
    if h.arguments:
        parts.append("**Here:**\n" + "\n".join(
            f"- {_code(a.param or a.text)}: {_code(a.value) if a.value else 'not known'}" for a in h.arguments))
    if h.rules:
        if h.arguments is not None:
            lines = [f"- {_MARK[c.state]} {c.rule.code} {escape_prose(c.rule.summary)}"
                     for c in h.checks if c.state in (FAILS, WARNS)]
            for state in (UNKNOWN, HOLDS):  # one line each: the failures are what is read
                these = [f"{c.rule.code} {escape(c.rule.name)}" for c in h.checks if c.state == state]
                if these:
                    lines.append(f"- {_MARK[state]} " + ", ".join(these))
            states = {c.state for c in h.checks}
            legend = ", ".join(f"{_MARK[s]} {_LEGEND[s]}" for s in (HOLDS, FAILS, WARNS, UNKNOWN) if s in states)
            head = f"**Checked here** ({legend}):"
        else:
            lines = [f"- {r.code} {escape_prose(r.summary)}" for r in h.rules]
            head = "**Checked by wgmma-lsp:**"
        parts.append(head + "\n" + "\n".join(lines))
    return "\n\n".join(parts)

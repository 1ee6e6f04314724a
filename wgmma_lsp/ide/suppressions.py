"""Suppression comments: `# wgmma-lsp: ignore[WG001, WG002]` or a bare `# wgmma-lsp: ignore` on
the reported line silences those findings (or all of them) there, in the editor and the CLI.

A suppression that silences nothing is reported as WG902 unused-suppression (a warning), as
ruff's RUF100 reports an unused `# noqa`: a bare one with nothing to silence, a listed code with
no finding on its line, or a listed code that is no rule code at all. Codes of rules the
settings switch off are not reported, nor trace mode's own codes (`TRACE…`), which only a run
of JAX can confirm.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from dataclasses import dataclass

from wgmma_lsp.ide.model import Diagnostic, Fix, Severity, TextEdit
from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

MARKER = "wgmma-lsp: ignore"
_COMMENT_RE = LazyPattern(r"#\s*wgmma-lsp:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?")
_MARKER_RE = re.compile(r"wgmma-lsp:\s*ignore\b")


@dataclass(frozen=True)
class Suppression:
    """A `# wgmma-lsp: ignore[...]` comment."""
    line: int  # 0-based
    span: Span  # the `# wgmma-lsp: ignore[…]` text
    codes: tuple[str, ...] | None  # None: bare (every finding on the line)


def _comments(source: str) -> list[tuple[int, int, str]]:
    """(line, column, text) of every comment (code-point columns)."""
    try:
        return [(t.start[0] - 1, t.start[1], t.string)
                for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, ValueError, SystemError):
        # A file that does not tokenize (Python 3.12's tokenizer raises SystemError on NUL bytes): every `#` outside a simple string literal.
        out = []
        for i, line in enumerate(source.splitlines()):
            j = line.find("#")
            if j >= 0 and line[:j].count("'") % 2 == 0 and line[:j].count('"') % 2 == 0:
                out.append((i, j, line[j:]))
        return out


@functools.lru_cache(maxsize=16)
def parse(source: str) -> dict[int, Suppression]:
    """The suppression comments of a file, by line (cached: every hover and code action asks
    for the diagnostics, and tokenizing a large file costs milliseconds; callers only read)."""
    if _MARKER_RE.search(source) is None:
        return {}
    out: dict[int, Suppression] = {}
    for line, col, text in _comments(source):
        m = _COMMENT_RE.search(text)
        if m is None:
            continue
        codes = None
        if m.group("codes") is not None:
            codes = tuple(c.strip() for c in m.group("codes").split(",") if c.strip())
        span = Span(line, col + m.start(), line, col + m.end())
        out[line] = Suppression(line, span, codes)
    return out


def apply(diags: list[Diagnostic], source: str, settings: Settings) -> list[Diagnostic]:
    """`diags` minus the suppressed ones, plus WG902 for suppressions that silence nothing."""
    sups = parse(source)
    if not sups:
        return diags
    used: dict[int, set[str]] = {}
    kept: list[Diagnostic] = []
    for d in diags:
        sup = sups.get(d.span.line)
        if sup is not None and (sup.codes is None or d.code in sup.codes):
            used.setdefault(sup.line, set()).add(d.code)
            continue
        kept.append(d)
    return kept + _unused(sups, used, source, settings)


def _unused(sups: dict[int, Suppression], used: dict[int, set[str]], source: str,
            settings: Settings) -> list[Diagnostic]:
    from wgmma_lsp.rules.registry import find_rule
    from wgmma_lsp.rules.tool_codes import UNUSED_SUPPRESSION as RULE

    if not settings.rule_enabled(RULE.code, RULE.name):
        return []
    lines = source.splitlines()
    out = []
    for line, sup in sorted(sups.items()):
        hit = used.get(line, set())
        if sup.codes is None:
            if not hit:
                out.append(_warn(f"`# {MARKER}` silences nothing on this line", sup, lines, (), settings))
            continue
        unknown = [c for c in sup.codes if find_rule(c) is None and not c.startswith("TRACE")]
        stale = [c for c in sup.codes if c not in hit and c not in unknown and not c.startswith("TRACE")
                 and (rule := find_rule(c)) is not None and settings.rule_enabled(rule.code, rule.name)]
        if unknown:
            out.append(_warn(f"unknown rule code{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)}", sup, lines, tuple(unknown), settings))
        if stale:
            out.append(_warn(f"nothing to silence for {', '.join(stale)} on this line",
                             sup, lines, tuple(stale), settings))
    return out


def _warn(what: str, sup: Suppression, lines: list[str], codes: tuple[str, ...],
          settings: Settings) -> Diagnostic:
    from wgmma_lsp.rules.tool_codes import UNUSED_SUPPRESSION as RULE

    doc_uri = (f"{settings.docs_base_url}/{RULE.code}" if settings.docs_base_url
               else (RULE.doc_uri if RULE.doc_file is not None else None))
    return Diagnostic(code=RULE.code, name=RULE.name, message=f"Unused suppression: {what}",
                      span=sup.span,
                      severity=settings.severity_for(RULE.code, RULE.name, Severity.WARNING),
                      doc_uri=doc_uri, fixes=[removal(sup, lines, codes)])


def removal(sup: Suppression, lines: list[str], codes: tuple[str, ...]) -> Fix:
    """The fix for WG902: drop the stale codes, or the whole comment when none is left."""
    remaining = [c for c in sup.codes or () if c not in codes]
    if remaining:
        return Fix(f"Remove {', '.join(codes)} from the suppression",
                   (TextEdit(sup.span, f"# {MARKER}[{', '.join(remaining)}]"),))
    line = lines[sup.line] if sup.line < len(lines) else ""
    start = sup.span.col
    while start > 0 and line[start - 1] in " \t":  # and the blank before it
        start -= 1
    rest = line[sup.span.end_col:]
    if rest.strip().startswith("#"):  # another comment follows (`# noqa`): keep it
        end = sup.span.end_col + (len(rest) - len(rest.lstrip()))
        return Fix("Remove the unused suppression", (TextEdit(Span(sup.line, sup.span.col, sup.line, end), ""),))
    if rest.strip():  # more text in the comment: keep it
        return Fix("Remove the unused suppression", (TextEdit(sup.span, "#"),))
    if line[:start].strip() == "":  # a comment on a line of its own: drop the line's text
        start = 0
    return Fix("Remove the unused suppression",
               (TextEdit(Span(sup.line, start, sup.line, len(line)), ""),))


def add(d: Diagnostic, source: str) -> Fix | None:
    """The quick fix that silences `d` on its line (appends to an existing suppression)."""
    if d.code.startswith("WG9"):
        return None
    lines = source.splitlines()
    if d.span.line >= len(lines):
        return None
    line = lines[d.span.line]
    sup = parse(line).get(0)
    title = f"Suppress {d.code} on this line"
    if sup is not None:
        if sup.codes is None or d.code in sup.codes:
            return None
        new = f"# {MARKER}[{', '.join([*sup.codes, d.code])}]"
        return Fix(title, (TextEdit(Span(d.span.line, sup.span.col, d.span.line, sup.span.end_col), new),))
    end = len(line.rstrip())
    return Fix(title, (TextEdit(Span(d.span.line, end, d.span.line, len(line)),
                                f"  # {MARKER}[{d.code}]"),))

"""Signature help while a Pallas API call is typed: the installed JAX's signature, the parameter
at the cursor, and the same documentation as the hover (ide/api_help.py).

It works on half-typed lines: the call around the cursor is found in the document's current
text by a scan that knows brackets, strings and comments (no parse), its callee is resolved by
the text's own imports (or the last finished analysis' values, for names re-exported by the
user's modules), and the argument values and verdicts come from the analysis only when it is of
the current text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide import api_help
from wgmma_lsp.interpret.values import ApiVal, ModuleVal
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

SCAN_LINES = 60  # lines above the cursor the scan starts at most (at a `def`/`class` if nearer)
_STATEMENT_START = re.compile(r"\s*(?:async\s+def\s|def\s|class\s|@)")
_CALLEE = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*$")
_KEYWORD = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t].*$", re.MULTILINE)


@dataclass(frozen=True)
class OpenCall:
    callee: str  # as written, spaces removed: "plgpu.wgmma"
    span: Span  # the callee's, in the current text
    positional: int  # the argument at the cursor: how many come before it
    keyword: str | None  # the keyword it is given as (`name=`), if any


@dataclass(frozen=True)
class SignatureHelpInfo:
    label: str
    parameters: list[tuple[int, int]]  # each parameter's [start, end) in the label
    documentation: str  # Markdown
    active_parameter: int | None


def open_calls(text: str, line: int, col: int) -> list[OpenCall]:
    """The calls whose parentheses are open at the position, innermost first."""
    lines = text.split("\n")
    if line >= len(lines):
        return []
    start = max(0, line - SCAN_LINES)
    for ln in range(line, start - 1, -1):
        if _STATEMENT_START.match(lines[ln]) and ln < line:
            start = ln
            break
    chunk = "\n".join(lines[start:line] + [lines[line][:col]])
    stack: list[list[int]] = []  # [offset of the bracket, commas at its depth, start of the argument]
    opener: list[str] = []
    i, n = 0, len(chunk)
    while i < n:
        c = chunk[i]
        if c == "#":
            nl = chunk.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if c in "'\"":
            triple = chunk.startswith(c * 3, i)
            end = chunk.find(c * 3 if triple else c, i + (3 if triple else 1))
            if not triple:  # an unterminated string ends at the line's end
                nl = chunk.find("\n", i + 1)
                end = end if end >= 0 and (nl < 0 or end < nl) else (nl if nl >= 0 else -1)
            if end < 0:
                return []  # the cursor is inside a string
            i = end + (3 if triple else 1)
            continue
        if c in "([{":
            stack.append([i, 0, i + 1])
            opener.append(c)
        elif c in ")]}":
            if stack:
                stack.pop()
                opener.pop()
        elif c == "," and stack:
            stack[-1][1] += 1
            stack[-1][2] = i + 1
        i += 1
    out = []
    for (at, commas, arg_start), kind in zip(reversed(stack), reversed(opener)):
        if kind != "(":
            continue
        m = _CALLEE.search(chunk, max(0, at - 400), at)  # the name just before the parenthesis
        if m is None:
            continue
        kw = _KEYWORD.match(chunk, arg_start)
        keyword = kw.group(1) if kw is not None else None
        out.append(OpenCall(re.sub(r"\s+", "", m.group(1)), _span_of(chunk, start, m.start(1), m.end(1)),
                            commas, keyword))
    return out


def _span_of(chunk: str, first_line: int, a: int, b: int) -> Span:
    def pos(k: int) -> tuple[int, int]:
        return first_line + chunk.count("\n", 0, k), k - (chunk.rfind("\n", 0, k) + 1)
    return Span(*pos(a), *pos(b))


_imports_cache: dict[int, tuple[str, dict[str, str]]] = {}  # hash of a text -> (it, its imports)


def imported_names(text: str) -> dict[str, str]:
    """The document's import bindings: local name -> the dotted path it stands for (kept for
    the last few texts: signature help asks again at every keystroke of the same version)."""
    key = hash(text)
    hit = _imports_cache.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    out = _read_imports(text)
    if len(_imports_cache) >= 4:
        _imports_cache.pop(next(iter(_imports_cache)))
    _imports_cache[key] = (text, out)
    return out


def _read_imports(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _IMPORT_LINE.finditer(text):  # a regex over the whole text: no loop over its lines
        stmt, end = m.group(0).strip(), m.end()
        while (stmt.count("(") > stmt.count(")") or stmt.endswith("\\")) and end < len(text) \
                and len(stmt) < 2000:
            nl = text.find("\n", end + 1)
            nl = len(text) if nl < 0 else nl
            stmt, end = stmt.rstrip("\\") + " " + text[end + 1:nl].strip(), nl
        try:
            node = ast.parse(stmt).body[0]
        except (SyntaxError, ValueError, IndexError):
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    head = a.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def canonical_callee(callee: str, text: str, analysis: Analysis | None) -> str | None:
    """`plgpu.wgmma` as written -> its canonical API name, through the text's imports or, for a
    name the analysis knows (a re-export from the user's modules), its recorded value."""
    from wgmma_lsp.interpret import resolve

    head, _, rest = callee.partition(".")
    path = imported_names(text).get(head)
    found: str | None = None
    if path is not None:
        found = resolve.canonical_module(f"{path}.{rest}" if rest else path)
    elif analysis is not None:
        for rec in analysis.records.values():
            if rec.kind == "name" and rec.name == head:
                v = next((v for v in rec.values if isinstance(v, (ModuleVal, ApiVal))), None)
                if v is not None:
                    found = f"{v.name}.{rest}" if rest else v.name
                    break
    if found is None or "." not in found:
        return None
    module, _, attr = found.rpartition(".")
    return resolve.canonical_name(module, attr)


def signature_help(text: str, line: int, col: int, analysis: Analysis | None, current: bool,
                   settings: Settings | None = None) -> SignatureHelpInfo | None:
    """The help for the innermost open call of a documented API at the position. `analysis`:
    the last finished one; `current`: whether it is of `text` (its values are then shown)."""
    for call in open_calls(text, line, col):
        canonical = canonical_callee(call.callee, text, analysis)
        if canonical is None:
            continue
        found = api_help.help_for(analysis if current else None, canonical,
                                  call.span if current else None, settings)
        if found is None or found.doc is None:
            continue
        label, offsets = found.doc.label()
        return SignatureHelpInfo(label, offsets, api_help.markdown(found, with_signature=False),
                                 found.doc.param_index(call.positional, call.keyword))
    return None

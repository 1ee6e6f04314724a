"""`wgmma-lsp check --format …`: text, full, json, sarif, github.

Every format is a function from the results to the text printed on stdout. Lines and columns
are 1-based; columns count code points (SARIF says so with `columnKind`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from wgmma_lsp import __version__
from wgmma_lsp.batch import FileResult
from wgmma_lsp.ide.model import Diagnostic, Severity
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("text", "full", "json", "sarif", "github")


def _related_path(uri: str | None, default: Path) -> Path:
    """Where related information points: its file (a file URI, shown relative to the current
    folder when under it), or the diagnostic's own file."""
    if not uri:
        return default
    if uri.startswith("file:"):
        from urllib.parse import unquote, urlparse

        p = Path(unquote(urlparse(uri).path))
        try:
            return p.relative_to(Path.cwd())
        except ValueError:
            return p
    return Path(uri)


def _loc(path: Path, span: Span) -> str:
    return f"{path}:{span.line + 1}:{span.col + 1}"


def _sev(d: Diagnostic) -> str:
    return "" if d.severity == Severity.ERROR else f"[{d.severity.name.lower()}] "


def _pairs(results: Sequence[FileResult]) -> list[tuple[FileResult, Diagnostic]]:
    return [(r, d) for r in results for d in r.diagnostics]


def text(results: Sequence[FileResult]) -> str:
    lines = []
    for r, d in _pairs(results):
        lines.append(f"{_loc(r.path, d.span)}: {d.code} {_sev(d)}{d.message}")
        for rel in d.related:
            lines.append(f"  {_loc(_related_path(rel.uri, r.path), rel.span)}: {rel.message}")
    return "\n".join(lines)


def full(results: Sequence[FileResult]) -> str:
    """Each diagnostic with its source line underlined, its related lines and its fixes, as
    ruff's and rustc's full output."""
    blocks = []
    for r, d in _pairs(results):
        lines = (r.source or "").splitlines()
        out = [f"{_loc(r.path, d.span)}: {d.code} {_sev(d)}{d.message}"]
        out += _snippet(lines, d.span, d.code)
        for rel in d.related:
            if rel.uri is None:
                out += _snippet(lines, rel.span, rel.message, mark="-")[1:]  # one `|` between
            else:
                out.append(f"  ::: {_loc(_related_path(rel.uri, r.path), rel.span)}: {rel.message}")
        for fix in d.fixes:
            out.append(f"  = help: {fix.title}")
        if d.doc_uri:
            out.append(f"  = docs: {d.doc_uri}")
        blocks.append("\n".join(out))
    return "\n\n".join(blocks)


def _snippet(lines: list[str], span: Span, label: str, mark: str = "^") -> list[str]:
    if not 0 <= span.line < len(lines):
        return []
    number = str(span.line + 1)
    pad = " " * len(number)
    line = lines[span.line].expandtabs(4)
    raw = lines[span.line]
    start = len(raw[: span.col].expandtabs(4))
    end_col = span.end_col if span.end_line == span.line else len(raw)
    width = max(1, len(raw[: max(end_col, span.col)].expandtabs(4)) - start)
    return [f"{pad} |", f"{number} | {line}", f"{pad} | {' ' * start}{mark * width} {label}", f"{pad} |"]


def as_json(results: Sequence[FileResult]) -> str:
    return json.dumps([_json_record(r.path, d) for r, d in _pairs(results)], indent=2)


def _region(span: Span) -> dict[str, int]:
    return {"line": span.line + 1, "column": span.col + 1,
            "end_line": span.end_line + 1, "end_column": span.end_col + 1}


def _json_record(path: Path, d: Diagnostic) -> dict[str, Any]:
    return {
        "file": str(path), **_region(d.span),
        "code": d.code, "name": d.name, "severity": d.severity.name.lower(),
        "message": d.message, "source": d.source, "documentation": d.doc_uri,
        "related": [{"file": str(_related_path(rel.uri, path)), **_region(rel.span), "message": rel.message}
                    for rel in d.related],
        "fixes": [{"title": f.title, "preferred": f.preferred,
                   "edits": [{**_region(e.span), "new_text": e.new_text} for e in f.edits]}
                  for f in d.fixes],
    }


# --- SARIF 2.1.0 ----------------------------------------------------------------------------

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning",
           Severity.INFORMATION: "note", Severity.HINT: "note"}


def _artifact(path: Path) -> dict[str, str]:
    """A path relative to the current folder (with %SRCROOT%), else an absolute file URI."""
    absolute = Path(os.path.abspath(path))
    try:
        rel = absolute.relative_to(Path.cwd())
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": rel.as_posix(), "uriBaseId": "%SRCROOT%"}


def _sarif_region(span: Span) -> dict[str, int]:
    return {"startLine": span.line + 1, "startColumn": span.col + 1,
            "endLine": span.end_line + 1, "endColumn": span.end_col + 1}


def sarif(results: Sequence[FileResult], docs_base_url: str | None = None) -> str:
    from wgmma_lsp.rules.registry import ALL_CODES

    used = sorted({d.code for _, d in _pairs(results)})
    rules = []
    index: dict[str, int] = {}
    for code in used:
        rule = ALL_CODES.get(code)
        index[code] = len(rules)
        entry: dict[str, Any] = {"id": code}
        if rule is not None:
            entry.update({
                "name": "".join(w.capitalize() for w in rule.name.split("-")),
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.template},
                "help": {"text": rule.doc, "markdown": rule.doc},
                "defaultConfiguration": {"level": "warning" if code == "WG902" else "error"},
                "properties": {"stage": rule.installed_stage(), "kebab-name": rule.name,
                               **({"jax-exception": rule.exception} if rule.exception else {})},
            })
            help_uri = f"{docs_base_url}/{code}" if docs_base_url else (
                rule.doc_uri if rule.doc_file is not None else None)
            if help_uri:
                entry["helpUri"] = help_uri
        rules.append(entry)
    out_results = []
    for r, d in _pairs(results):
        loc = {"physicalLocation": {"artifactLocation": _artifact(r.path), "region": _sarif_region(d.span)}}
        res: dict[str, Any] = {
            "ruleId": d.code, "ruleIndex": index[d.code], "level": _LEVELS[d.severity],
            "message": {"text": d.message}, "locations": [loc],
        }
        if d.related:
            res["relatedLocations"] = [
                {"id": k, "message": {"text": rel.message},
                 "physicalLocation": {"artifactLocation": _artifact(_related_path(rel.uri, r.path)),
                                      "region": _sarif_region(rel.span)}}
                for k, rel in enumerate(d.related)]
        if d.fixes:
            res["fixes"] = [{
                "description": {"text": f.title},
                "artifactChanges": [{
                    "artifactLocation": _artifact(r.path),
                    "replacements": [{"deletedRegion": _sarif_region(e.span),
                                      "insertedContent": {"text": e.new_text}} for e in f.edits],
                }],
            } for f in d.fixes if f.edits]
            if not res["fixes"]:
                del res["fixes"]
        out_results.append(res)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "wgmma-lsp", "version": __version__,
                                "semanticVersion": __version__, "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": out_results,
        }],
    }
    return json.dumps(log, indent=2)


# --- GitHub workflow commands -----------------------------------------------------------------

def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(results: Sequence[FileResult]) -> str:
    lines = []
    for r, d in _pairs(results):
        kind = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(d.severity, "notice")
        span = d.span
        props = (f"file={_escape_property(Path(r.path).as_posix())},"
                 f"line={span.line + 1},col={span.col + 1},"
                 f"endLine={span.end_line + 1},endColumn={span.end_col + 1},"
                 f"title={_escape_property(d.code)}")
        lines.append(f"::{kind} {props}::{_escape_data(d.message)}")
    return "\n".join(lines)


def render(fmt: str, results: Sequence[FileResult], docs_base_url: str | None = None) -> str:
    if fmt == "full":
        return full(results)
    if fmt == "json":
        return as_json(results)
    if fmt == "sarif":
        return sarif(results, docs_base_url)
    if fmt == "github":
        return github(results)
    return text(results)


def summary(results: Sequence[FileResult]) -> str:
    """`All checks passed!`, or `Found N errors in M files` (warnings and notes counted apart)."""
    pairs = _pairs(results)
    errors = sum(d.severity == Severity.ERROR for _, d in pairs)
    warnings = sum(d.severity == Severity.WARNING for _, d in pairs)
    notes = len(pairs) - errors - warnings
    files = sum(bool(r.diagnostics) for r in results)
    if not pairs:
        return "All checks passed!"
    parts = []
    if errors or not (warnings or notes):
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    if notes:
        parts.append(f"{notes} note{'s' if notes != 1 else ''}")
    counted = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"Found {counted} in {files} file{'s' if files != 1 else ''}."

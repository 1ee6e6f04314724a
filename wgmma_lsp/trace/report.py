"""What a trace run means for the editor: diagnostics, traced avals for hovers and inlay hints.

Pure functions over a `TraceOutcome`; no processes, no JAX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from wgmma_lsp.ide.model import Diagnostic, RelatedInfo, Severity
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span
from wgmma_lsp.entry.declared import EntryPoint
from wgmma_lsp.trace.runner import TraceOutcome, format_signal
from wgmma_lsp.rules.trace_codes import (  # noqa: F401  (also read as report.X)
    ENTRY_ERROR, IMPORT_ERROR, JAX_LIMITATION, LOWERING_ERROR, MEMORY_LIMIT, PROCESS_FAILED, TIME_LIMIT,
    TRACE_ERROR)

SOURCE = "wgmma-lsp (trace)"

#: What JAX's own failures mean (the worker's `limitation`), and the way out.
_LIMITATIONS = {
    "no-lowering-rule": (
        "JAX {jax} registers no lowering for this `pl.pallas_call` with Mosaic GPU compiler params "
        "(it fails with a bare `assert rule is not None` in jax/_src/pallas/pallas_call.py); "
        "Mosaic GPU kernels go through `plgpu.kernel` in this version"),
    "no-device": (
        "JAX {jax} sends a `pl.pallas_call` without Mosaic GPU compiler params to the Triton "
        "backend, which needs a GPU to lower (\"{message}\"); write the kernel with `plgpu.kernel` "
        "to have it lowered for Mosaic GPU"),
}

#: Primitives whose outputs say nothing about the expression (a store's discarded old value).
_HIDDEN_PRIMITIVES = {"swap"}


# -- rule matching -------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _rule_patterns() -> tuple:
    try:
        from wgmma_lsp.rules.registry import RULES
    except Exception:  # the registry is optional for trace mode
        return ()
    out = []
    for rule in RULES.values():
        pattern = template_regex(rule.template)
        if pattern is not None:
            out.append((pattern, rule))
    return tuple(out)


def template_regex(template: str) -> re.Pattern[str] | None:
    """A regex for a JAX message template: `{...}` fields match anything, the rest literally."""
    if not template or not template.strip():
        return None
    parts = re.split(r"\{[^{}]*\}", template)
    if sum(len(p.strip()) for p in parts) < 8:  # too little literal text to be specific
        return None
    return re.compile("^" + "(.+?)".join(re.escape(p) for p in parts) + "$", re.DOTALL)


def match_rule(message: str, stage: str) -> tuple[str, str]:
    """The (code, name) of the registry rule whose template JAX's message fits, or a TRACE code."""
    first = message.strip()
    for pattern, rule in _rule_patterns():
        if pattern.match(first):
            return rule.code, rule.name
    return LOWERING_ERROR if stage == "lower" else TRACE_ERROR


# -- diagnostics ---------------------------------------------------------------------------

def _line_span(lines: list[str], line: int) -> Span:
    """The code on a line: from its first non-blank character to its end, minus a trailing comment."""
    if not 0 <= line < len(lines):
        return Span(max(line, 0), 0, max(line, 0), 0)
    text = lines[line]
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    hash_at = text.find("  #", start)
    if hash_at > start and text.count('"', 0, hash_at) % 2 == 0 and text.count("'", 0, hash_at) % 2 == 0:
        end = len(text[:hash_at].rstrip())
    return Span(line, start, line, max(end, start))


def blame_span(blame: list | None, lines: list[str]) -> Span | None:
    """The worker's `[line, col, end_line, end_col]` (cols may be null) as a Span in the file."""
    if not blame:
        return None
    line, col, end_line, end_col = blame
    if not 0 <= line < max(len(lines), 1):
        return None
    if col is None or end_col is None:
        return _line_span(lines, line)
    return Span(line, col, end_line, end_col)


def _is_jax_error(err: dict) -> bool:
    frame = (err.get("jax_frame") or "").replace("\\", "/")
    return "/jax/" in frame or "/jaxlib/" in frame or err.get("type") in ("MLIRError", "VerificationError")


def _message(err: dict) -> str:
    """JAX's own message for JAX's errors; `Type: message` for errors of the user's code."""
    msg = err.get("message") or err.get("type") or "error"
    if _is_jax_error(err) or err.get("no_jax"):
        return msg
    return f"{err.get('type')}: {msg}" if err.get("type") else msg


def _entry_anchor(entry: EntryPoint, lines: list[str]) -> Span:
    if entry.origin == "comment" and entry.line is not None:
        return _line_span(lines, entry.line)
    return Span(0, 0, 0, 0)


def _entry_note(entry: EntryPoint, lines: list[str], verb: str) -> RelatedInfo:
    message = f"{verb} entry point {entry.label}"
    if entry.origin == "pyproject" and entry.config_path:
        line = entry.line or 0
        return RelatedInfo(Span(line, 0, line, 0), message, uri=Path(entry.config_path).as_uri())
    return RelatedInfo(_entry_anchor(entry, lines), message)


@dataclass
class _Pending:
    diag: Diagnostic
    notes: list[RelatedInfo] = field(default_factory=list)


def outcome_diagnostics(outcome: TraceOutcome, settings: Settings | None = None) -> list[Diagnostic]:
    """Diagnostics for one trace run: every exception JAX raised, on the line JAX blames."""
    settings = settings or Settings()
    req = outcome.request
    lines = req.source.splitlines()
    found: dict[tuple, _Pending] = {}

    def add(code_name: tuple[str, str], message: str, span: Span, severity: Severity,
            note: RelatedInfo | None) -> None:
        code, name = code_name
        if not settings.rule_enabled(code, name):
            return
        key = (span.line, message)
        if key not in found:
            found[key] = _Pending(Diagnostic(
                code=code, name=name, message=message, span=span, source=SOURCE,
                severity=settings.severity_for(code, name, severity)))
        if note is not None and all(n.message != note.message for n in found[key].notes):
            found[key].notes.append(note)

    imp = outcome.import_error
    if imp is not None:
        span = blame_span(imp.get("blame"), lines) or Span(0, 0, 0, 0)
        if imp.get("no_jax"):
            add(PROCESS_FAILED, f"trace mode: {imp.get('message')}", span, Severity.WARNING, None)
        elif imp.get("memory"):
            add(MEMORY_LIMIT, _limit_message(outcome, "memory", "importing the module"), span,
                Severity.WARNING, None)
        else:
            code = match_rule(imp.get("message", ""), "trace") if _is_jax_error(imp) else IMPORT_ERROR
            add(code, _message(imp), span, Severity.ERROR,
                RelatedInfo(span, f"raised while trace mode imported the module ({imp.get('type')})"))
    results = outcome.entry_results
    for i, entry in enumerate(req.entries):
        res = results.get(i)
        err = res.get("error") if res else None
        if not err:
            continue
        stage = res.get("stage", "trace")
        verb = {"lower": "raised while lowering", "entry": "raised while evaluating"}.get(
            stage, "raised while tracing")
        note = _entry_note(entry, lines, f"{err.get('type')} {verb}")
        span = blame_span(err.get("blame"), lines) or _entry_anchor(entry, lines)
        limitation = _LIMITATIONS.get(err.get("limitation") or "")
        if limitation is not None and stage == "lower":
            text = limitation.format(jax=outcome.jax_version or "?", message=err.get("message", ""))
            add(JAX_LIMITATION, f"trace mode: `{entry.call}` traced cleanly but was not lowered: "
                f"{text}", _entry_anchor(entry, lines), Severity.WARNING,
                _entry_note(entry, lines, f"{err.get('type')} raised by JAX itself while lowering"))
        elif err.get("memory"):
            add(MEMORY_LIMIT, _limit_message(outcome, "memory", f"tracing {entry.call}"), span,
                Severity.WARNING, note)
        elif stage == "entry" and not _is_jax_error(err):
            add(ENTRY_ERROR, f"entry point `{entry.call}` failed: {_message(err)}", span,
                Severity.ERROR, note)
        else:
            add(match_rule(err.get("message", ""), stage), _message(err), span, Severity.ERROR, note)
    if outcome.status not in ("ok", "cancelled"):
        d = _process_diagnostic(outcome, lines)
        if d is not None:
            code_name, message, span, note = d
            add(code_name, message, span, Severity.WARNING, note)
    out = []
    for p in found.values():
        p.diag.related.extend(p.notes)
        out.append(p.diag)
    out.sort(key=lambda d: (d.span.line, d.span.col, d.code))
    return out


def _running(outcome: TraceOutcome) -> tuple[str, EntryPoint | None]:
    stage = outcome.stage or {}
    if stage.get("stage") == "entry":
        idx = stage.get("id")
        entries = outcome.request.entries
        if isinstance(idx, int) and 0 <= idx < len(entries):
            return f"tracing entry point `{entries[idx].call}`", entries[idx]
    if stage.get("stage") == "import":
        return "importing the module", None
    return "starting (importing jax)", None


def _limit_message(outcome: TraceOutcome, kind: str, doing: str) -> str:
    req = outcome.request
    if kind == "time":
        return (f"trace mode: time limit of {req.timeout:g} s exceeded while {doing}; "
                f"the trace process was killed")
    return (f"trace mode: memory limit of {req.memory_mb} MB exceeded while {doing}; "
            f"the trace process was stopped")


_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+)')


def hang_line(stderr: str, path: str) -> int | None:
    """The innermost line of `path` in the last faulthandler stack dump (0-based), if any.

    Each thread's stack is listed most recent call first; the first frame in the user's file
    of any thread (the main thread is the one running user code) is where it hung.
    """
    start = stderr.rfind("Timeout (")
    text = stderr[start:] if start >= 0 else stderr
    target = _norm(path)
    for ln in text.splitlines():
        m = _DUMP_FRAME.match(ln)
        if m and _norm(m.group("file")) == target:
            return int(m.group("line")) - 1
    return None


def _norm(p: str) -> str:
    try:
        return str(Path(p).resolve())
    except OSError:
        return p


def _process_diagnostic(outcome: TraceOutcome, lines: list[str]):
    doing, entry = _running(outcome)
    anchor = _entry_anchor(entry, lines) if entry else Span(0, 0, 0, 0)
    note = _entry_note(entry, lines, "running") if entry else None
    if outcome.status == "timeout":
        line = hang_line(outcome.stderr, outcome.request.path)
        span = _line_span(lines, line) if line is not None else anchor
        return TIME_LIMIT, _limit_message(outcome, "time", doing), span, note
    if outcome.status == "memory":
        return MEMORY_LIMIT, _limit_message(outcome, "memory", doing), anchor, note
    if outcome.status == "flood":
        return (PROCESS_FAILED, "trace mode: the trace process sent more protocol data than "
                "allowed and was stopped", anchor, note)
    if outcome.status == "failed-to-start":
        return PROCESS_FAILED, f"trace mode: {outcome.stderr.strip()}", Span(0, 0, 0, 0), None
    tail = [ln for ln in outcome.stderr.strip().splitlines() if ln.strip()]
    last = f": {tail[-1].strip()[:300]}" if tail else ""
    return (PROCESS_FAILED, f"trace mode: the trace process ended unexpectedly "
            f"({format_signal(outcome.returncode)}) while {doing}{last}", anchor, note)


def dedupe_against_static(trace: list[Diagnostic], static: list[Diagnostic]) -> list[Diagnostic]:
    """Drop trace diagnostics that the static engine already reports (same line, same error)."""
    have = {(d.span.line, d.message) for d in static} | {(d.span.line, d.code) for d in static}
    return [d for d in trace
            if (d.span.line, d.message) not in have and (d.span.line, d.code) not in have]


# -- traced avals --------------------------------------------------------------------------

@dataclass(frozen=True)
class TracedAval:
    """The avals an equation of the traced jaxpr produced, at the user-file span that bound it."""

    span: Span
    primitive: str
    avals: tuple[str, ...]
    entry: EntryPoint
    whole_line: bool = False  # the frame had no column information

    def contains(self, line: int, col: int) -> bool:
        if self.whole_line:
            return self.span.line == line
        return self.span.contains(line, col)


def traced_avals(outcome: TraceOutcome) -> list[TracedAval]:
    """Every equation of every entry point's jaxpr that the user's file bound."""
    req = outcome.request
    lines = req.source.splitlines()
    out: list[TracedAval] = []
    for i, res in outcome.entry_results.items():
        if not 0 <= i < len(req.entries):
            continue
        for rec in res.get("avals") or []:
            blame = rec.get("span")
            span = blame_span(blame, lines)
            if span is None or not rec.get("avals"):
                continue
            out.append(TracedAval(span, str(rec.get("primitive")), tuple(rec["avals"]),
                                  req.entries[i], whole_line=blame[1] is None))
    return out


def _size(a: TracedAval) -> tuple[int, int]:
    return (1 << 30, 0) if a.whole_line else (a.span.end_line - a.span.line, a.span.end_col - a.span.col)


def _format(groups: dict[EntryPoint, list[str]], several: bool) -> list[str]:
    out = []
    for entry, avals in groups.items():
        value = ", ".join(f"`{a}`" for a in avals)
        out.append(f"traced ({entry.call}): {value}" if several else f"traced: {value}")
    return list(dict.fromkeys(out))


def hover_lines_for(avals: list[TracedAval], line: int, col: int) -> list[str]:
    """Markdown lines for a hover: the avals of the innermost traced expression under the cursor."""
    hits = [a for a in avals if a.primitive not in _HIDDEN_PRIMITIVES and a.contains(line, col)]
    if not hits:
        return []
    best = min(_size(a) for a in hits)
    chosen = [a for a in hits if _size(a) == best]
    span = chosen[-1].span
    groups: dict[EntryPoint, list[str]] = {}
    for a in chosen:
        if a.span == span:
            groups[a.entry] = list(a.avals)  # the last equation of the span is its result
    return _format(groups, several=len(groups) > 1)


def inlay_labels_for(avals: list[TracedAval], line: int) -> list[tuple[int, str]]:
    """One inlay hint per line: the avals of the outermost traced expression on it, at its end."""
    on_line = [a for a in avals if a.span.line == line and a.span.end_line == line
               and not a.whole_line and a.primitive not in _HIDDEN_PRIMITIVES]
    if not on_line:
        return []
    widest = max(a.span.end_col - a.span.col for a in on_line)
    outer = [a for a in on_line if a.span.end_col - a.span.col == widest]
    span = outer[-1].span
    values: dict[EntryPoint, str] = {}
    for a in outer:
        if a.span == span:
            values[a.entry] = ", ".join(a.avals)
    label = " | ".join(dict.fromkeys(values.values()))
    return [(span.end_col, f" traced {label}")]

"""Recording values for hover and reporting findings: the interpreter's output."""

from __future__ import annotations

import ast

from wgmma_lsp.analysis_types import ValueRecord
from wgmma_lsp.interpret import followon
from wgmma_lsp.interpret.interp_base import MAX_RECORD_VALUES, _informative, _partial
from wgmma_lsp.interpret.origin import ForeignSpan
from wgmma_lsp.interpret.values import (
    Value,
    next_born,
)
from wgmma_lsp.rules.base import Finding, Related, Rule
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


class RecordsMixin:
    """Recording values for hover and reporting findings: the interpreter's output."""

    # -- bookkeeping ----------------------------------------------------------------------
    def span(self, node: ast.AST) -> Span:
        key = id(node)
        s = self._span_cache.get(key)
        if s is None:
            s = self.lines.span(node) if self.where is None else self.where.span(node)
            self._span_cache[key] = s
        return s

    def record(self, node: ast.AST, value: Value, kind: str = "expr", name: str | None = None) -> None:
        """Remember a value an expression had (by node: spans are computed once, at the end)."""
        if self.silent or self.where is not None:
            return
        key = id(node)
        entry = self._records.get(key)
        if entry is None:
            self._records[key] = (node, kind, name, [value], [self.ctx])
            return
        if self.flip_flags or (self.hover_only and key in self.hover_kept):
            return  # (what `_record` finds first, asked before anything else is)
        values = entry[3]
        for v in values:
            if v is value:
                return  # recorded already (what `_record` would find first, with nothing read)
        if len(values) >= MAX_RECORD_VALUES:
            full = self._records_full
            if key in full:
                return
            if not any(map(_partial, values)):
                full.add(key)  # (settled: `_record` never changes such values again)
                return  # full of fully known values: nothing can be added or replaced
        if self.observing:  # keeping books for hovers is not looking at a swept value
            obs = self.obs
            obs.paused += 1
            try:
                self._record(entry, value)
            finally:
                obs.paused -= 1
            return
        self._record(entry, value)

    def _record(self, entry: tuple, value: Value) -> None:
        values = entry[3]
        if self.flip_flags:
            return  # flags flipped: only code nothing reached gets values (they hold then)
        if self.hover_only:
            # Code the concrete contexts reached keeps their values; code that got its first
            # informative value in the hover pass keeps the values of that run (one context:
            # every value a loop of its takes, `grid_tile_width` in (1, 2, 4, 8), not the first).
            if id(entry[0]) in self.hover_kept:
                return
            ctx = self.ctx
            for v, c in zip(values, entry[4]):
                if c is not ctx and _informative(v):
                    return
        for v in values:
            if v is value or v == value:
                return
        # Several contexts: a value with unknown parts adds nothing beside a fully known one.
        if _partial(value):
            for v in values:
                if not _partial(v):
                    return
        else:
            keep = [i for i, v in enumerate(values) if not _partial(v)]
            if len(keep) < len(values):
                entry[3][:] = [values[i] for i in keep]
                entry[4][:] = [entry[4][i] for i in keep]
        if len(values) < MAX_RECORD_VALUES:
            values.append(value)
            entry[4].append(self.ctx)

    def recorded(self, node: ast.AST) -> list[Value]:
        """The values recorded so far for an expression node."""
        entry = self._records.get(id(node))
        return list(entry[3]) if entry is not None else []

    def finish_records(self) -> dict[Span, ValueRecord]:
        """The recorded values by source span, for the IDE layer."""
        out = self.records
        for node, kind, name, values, contexts in self._records.values():
            span = self.span(node)
            labels = [c.label() if c is not None else None for c in contexts]
            rec = out.get(span)
            if rec is None:
                out[span] = ValueRecord(span, kind, list(values), name, labels)
            else:
                for v, label in zip(values, labels):
                    if v not in rec.values and len(rec.values) < MAX_RECORD_VALUES:
                        rec.values.append(v)
                        rec.contexts.append(label)
        self._records.clear()
        self._records_full.clear()
        return out

    def report(self, rule: Rule, message: str, span: Span | None, blame_line: int,
               related: list[Related] | None = None, data: dict[str, Any] | None = None,
               condition: str = "") -> None:
        """A model proved that JAX raises `message` here (with `condition`: unless sizes that
        differ only symbolically turn out equal, `tile_m == tile_n`: a warning), unless JAX's
        run already stopped at an earlier error (interpret/followon.py)."""
        self.report_serial += 1  # (every report made, kept or not: models/tcgen05_m64.py)
        if self.silent or span is None or self.home is not None or self.hover_only \
                or self.expecting_error:
            return
        if isinstance(span, ForeignSpan) or any(isinstance(r.span, ForeignSpan) for r in related or ()) \
                or any(isinstance(v, ForeignSpan) for v in (data or {}).values()):
            moved = self._into_document(message, span, related or [], data or {})
            if moved is None:
                return
            span, blame_line, related, data = moved
        caught = self.may_be_caught(rule, message)  # always asked: it marks the `try` scopes
        certain = self.certain and not any(f.maybe_returned for f in self.stack) and not caught \
            and not any(lp.maybe_stopped for lp in self.loops if lp is not None)
        finding = Finding(rule, message, span, blame_line, related or [], certain and not condition,
                          data or {}, " <- ".join(reversed(self.context[-3:])), condition=condition)
        key = finding.key
        seen = key in self._finding_keys
        if self.expected_by_handler(rule, message):
            # The user's code catches exactly this error (a tuning loop skipping configurations
            # that exceed shared memory): not a problem of this context. A memoised call keeps
            # it, for replays in contexts that do not expect it.
            known = next((f for f in self.findings if f.key == key), finding) if seen else finding
            for entry in self.captures:
                entry.findings.append((known, False))
            return
        ctx = self.ctx
        ended = followon.ended_at(self, rule, ctx)
        if ended is not None:
            # JAX raised earlier on this run and never gets here: not this context's. A call
            # being memoised since before that keeps it, for replays in runs that go on.
            if seen:
                finding = next(f for f in self.findings if f.key == key)
            else:
                finding.owner = self._owner()
            for entry in self.captures:
                if followon.keeps(entry, ended):
                    entry.findings.append((finding, certain))
            return
        sure = certain and not condition
        if seen:
            # Seen already: if this path is certain, upgrade the earlier finding.
            for f in self.findings:
                if f.key == key:
                    self.count_report(f, ctx, sure)
                    for entry in self.captures:
                        entry.findings.append((f, certain))
            followon.raised(self, rule, message, ctx, sure, caught, condition)
            return
        for entry in self.captures:
            entry.findings.append((finding, certain))
        self.report_log.append((finding, finding.certain))
        finding.contexts.append(ctx)
        finding.owner = self._owner()
        self._finding_keys.add(key)
        self.findings.append(finding)
        followon.raised(self, rule, message, ctx, sure, caught, condition)

    def count_report(self, f: Finding, ctx: Any, sure: bool) -> None:
        """A report, in `ctx`, of a finding made before (made again, or replayed by a memoised
        call): `sure` when certain there. A lowering finding's report inside a kernel body is
        noted there, to be undone if the body's tracing fails (`settle_lowering_findings`)."""
        self.report_log.append((f, sure))
        added = ctx not in f.contexts
        if f.rule.installed_stage() == "lower" and self.kernel.inside:
            self.kernel.counted.append((f, f.certain, ctx if added else _NOT_ADDED))
        f.certain = f.certain or sure
        if added:
            f.contexts.append(ctx)

    def _owner(self) -> int | None:
        """The function a finding is made in (the id of its node), for `driver.label_contexts`."""
        owner = next((fr.func.node for fr in reversed(self.stack) if fr.func is not None), None)
        return id(owner) if owner is not None else None

    def _into_document(self, message: str, span: Span, related: list[Related],
                       data: dict[str, Any]) -> tuple[Span, int, list[Related], dict[str, Any]] | None:
        """A finding that involves other files, in the analysed document's terms.

        JAX blames the innermost frame of the error's traceback. When that frame is in another
        of the user's modules, the traceback also holds the frame of the analysed document that
        called into it: the finding is reported there, with the other file's line as related
        information (a document's diagnostics can only sit in that document). Facts the quick
        fixes use are dropped when they point into other files (no fix edits another file)."""
        out_related: list[Related] = []
        if isinstance(span, ForeignSpan):
            if self.entry_span is None:
                return None  # not reached from the analysed document: that module's own business
            out_related.append(Related(span.plain(), f"JAX raises this here: {message}", span.path))
            data = {}
            blame = self.entry_span.line
            span = self.entry_span
        else:
            blame = span.line
            data = {k: v for k, v in data.items() if not isinstance(v, ForeignSpan)}
        for r in related:
            if isinstance(r.span, ForeignSpan):
                out_related.append(Related(r.span.plain(), r.message, r.span.path))
            else:
                out_related.append(r)
        return span, blame, out_related, data

    def kernel_mark(self) -> tuple[int, int]:
        """Where a kernel body's findings start, for `settle_lowering_findings`: in the
        findings, and in the log of every report made (one already found, from another
        context, is reported again without a new finding)."""
        return len(self.findings), len(self.report_log)

    def settle_lowering_findings(self, mark: tuple[int, int]) -> None:
        """After a kernel body ran (from `mark = kernel_mark()` on): JAX lowers a kernel only if
        tracing it succeeded, so a trace-time error raised in this run — certain — hides the
        lowering-time findings it made, and a possible one makes them possible too. A lowering
        finding made before, in another context, and reported again here is as it was before
        this run: without this context when tracing fails for sure, no more certain than it was
        when it may."""
        start, log_start = mark
        new = self.findings[start:]
        lowering = [f for f in new if f.rule.installed_stage() == "lower"]
        counted = self.kernel.counted
        if not lowering and not counted:
            return
        traced = [(f, c) for f, c in self.report_log[log_start:] if f.rule.installed_stage() in followon.ENDING]
        del self.report_log[log_start:]  # read by this kernel only (an enclosing one: its own findings)
        self.report_log.extend(traced)
        if not traced:
            return
        failed = any(c for _, c in traced)
        for f, was, ctx in reversed(counted):
            f.certain = was
            if failed and ctx is not _NOT_ADDED and ctx in f.contexts:
                f.contexts.remove(ctx)
        if failed:
            self.findings[start:] = [f for f in new if f.rule.installed_stage() != "lower"]
            for f in lowering:
                self._finding_keys.discard(f.key)
        else:
            for f in lowering:
                f.certain = False

    def uncertain(self, flag: bool = True) -> "_Uncertain":
        """`with interp.uncertain(flag):` what runs inside may not run (findings uncertain)."""
        return _Uncertain(self, flag)

    def quiet(self) -> "_Quiet":
        """`with interp.quiet():` nothing recorded or reported inside."""
        return _Quiet(self)


#: `count_report`'s note of a report that added no context (the finding had this one already).
_NOT_ADDED = object()


class _Uncertain:
    """`RecordsMixin.uncertain`: a class, not a generator (entered for every branch and unknown
    call: `contextlib` costs several times more)."""

    __slots__ = ("interp", "flag", "saved", "saved_born")

    def __init__(self, interp: Any, flag: bool) -> None:
        self.interp, self.flag = interp, flag

    def __enter__(self) -> None:
        interp = self.interp
        self.saved, self.saved_born = interp.certain, interp.uncertain_born
        if self.flag:
            if interp.certain:
                interp.uncertain_born = next_born()  # what is made from here on exists only here
            interp.certain = False
            interp.uncertain_depth += 1

    def __exit__(self, *exc: object) -> None:
        interp = self.interp
        interp.certain, interp.uncertain_born = self.saved, self.saved_born
        if self.flag:
            interp.uncertain_depth -= 1


class _Quiet:
    """`RecordsMixin.quiet`, as `_Uncertain` is made. The outermost one entered on a certain path
    (a test case's arguments, an entry point's) notes when it began: the objects made from there
    on exist on that path, and are changed exactly there (`mutation.made_on_this_path`)."""

    __slots__ = ("interp", "saved")

    def __init__(self, interp: Any) -> None:
        self.interp = interp

    def __enter__(self) -> None:
        interp = self.interp
        self.saved = interp.quiet_born
        if not interp.silent:
            interp.quiet_born = next_born() if interp.certain else None
        interp.silent += 1

    def __exit__(self, *exc: object) -> None:
        self.interp.silent -= 1
        self.interp.quiet_born = self.saved

"""The last finished analysis of each document, for answers while a newer one runs.

Hover and code actions answer from it (as pyright does) instead of waiting for the analysis of
the newest version. Positions are mapped conservatively between the two versions' texts: the
lines before the first changed line keep their numbers, the lines after the last changed line
shift by the number of lines added or removed, and a line in between (changed, or not known to
be the same) gets no answer rather than a wrong one.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.spans import Span

STALE_NOTE = "*(from the analysis of an earlier version; re-analysing…)*"


@dataclass
class Finished:
    generation: int
    analysis: Analysis


class FinishedAnalyses:
    """uri -> the newest analysis that finished (of any generation)."""

    def __init__(self) -> None:
        self._by_uri: dict[str, Finished] = {}

    def store(self, uri: str, generation: int, analysis: Analysis) -> None:
        last = self._by_uri.get(uri)
        if last is None or last.generation <= generation:
            self._by_uri[uri] = Finished(generation, analysis)

    def get(self, uri: str) -> Finished | None:
        return self._by_uri.get(uri)

    def forget(self, uri: str) -> None:
        self._by_uri.pop(uri, None)


class LineMap:
    """Line numbers between an old and a new text, where the line's text is the same."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        n = min(len(old), len(new))
        prefix = 0
        while prefix < n and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while suffix < n - prefix and old[-1 - suffix] == new[-1 - suffix]:
            suffix += 1
        self.prefix, self.suffix = prefix, suffix
        self.old_len, self.new_len = len(old), len(new)

    def to_old(self, line: int) -> int | None:
        if line < self.prefix:
            return line
        if self.new_len - self.suffix <= line < self.new_len:
            return line - self.new_len + self.old_len
        return None

    def to_new(self, line: int) -> int | None:
        if line < self.prefix:
            return line
        if self.old_len - self.suffix <= line < self.old_len:
            return line - self.old_len + self.new_len
        return None

    def span_to_new(self, span: Span) -> Span | None:
        start, end = self.to_new(span.line), self.to_new(span.end_line)
        if start is None or end is None:
            return None
        return Span(start, span.col, end, span.end_col)

    def span_to_old(self, span: Span) -> Span | None:
        start, end = self.to_old(span.line), self.to_old(span.end_line)
        if start is None or end is None:
            return None
        return Span(start, span.col, end, span.end_col)

"""Entry point of the interpreter (work in progress)."""

from __future__ import annotations

from wgmma_lsp.analysis import Analysis


def run(source: str, path: str | None) -> Analysis:
    return Analysis(source=source, path=path)

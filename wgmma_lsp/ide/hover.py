from __future__ import annotations

from wgmma_lsp.analysis import Analysis
from wgmma_lsp.ide.model import HoverInfo
from wgmma_lsp.settings import Settings


def hover(analysis: Analysis, line: int, col: int, settings: Settings | None = None) -> HoverInfo | None:
    return None

"""The IDE results' data types, re-exported: they live in `wgmma_lsp/ide_model.py`, a leaf below
the rules (a rule builds the `Fix` of its finding) and the settings (`Severity`)."""

from __future__ import annotations

from wgmma_lsp.ide_model import (  # noqa: F401
    Severity, TextEdit, Fix, RelatedInfo, Diagnostic, HoverInfo, InlayHint)

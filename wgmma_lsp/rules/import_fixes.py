"""The quick fix of WG110 and WG111: the module path every supported JAX has, in place of JAX
0.12.1's (`jax.pallas.mosaic_gpu` → `jax.experimental.pallas.mosaic_gpu`; `from jax import
pallas` → `from jax.experimental import pallas`). The model (models/jax_imports.py) offers it only
where the installed JAX has that module; the tests run the fixed statement."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding


def use_older_path(finding: Finding, source: str) -> list[Fix]:
    span, new = finding.data.get("module_span"), finding.data.get("replacement")
    if span is None or not new:
        return []
    return [Fix(f"Import from `{new}` (the path the installed JAX has)", (TextEdit(span, new),), True)]

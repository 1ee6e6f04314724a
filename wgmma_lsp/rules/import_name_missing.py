"""WG111 import-name-missing: `from jax.experimental.pallas[.mosaic_gpu] import name` (or another
JAX package) where the installed JAX's module has no such name or submodule: Python's
`ImportError`, before anything is traced."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path
from wgmma_lsp.rules.import_fixes import use_older_path

RULE = Rule(
    code="WG111",
    name="import-name-missing",
    summary="The name imported from a JAX module is not in the installed JAX (removed, or newer "
            "than it).",
    template="cannot import name {name!r} from {module!r} ({path})",
    exception="ImportError",
    jax_source="Python's import system, over the installed jax package's files and its "
               "_deprecations tables (models/jax_imports.py)",
    doc_file=doc_path(__file__),
    fixes=use_older_path,
    table_message="`cannot import name 'transpose_ref' from 'jax.experimental.pallas.mosaic_gpu' (…/mosaic_gpu.py)`",
    fix_summary="`from jax import pallas` → `from jax.experimental import pallas`",
)

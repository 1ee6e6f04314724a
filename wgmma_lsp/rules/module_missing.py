"""WG110 module-missing: `import jax.pallas…` (or `from jax.pallas… import …`) where the installed
JAX has no such module, or a JAX module whose own imports need a package the environment lacks
(`absl` for JAX 0.10.2's mosaic_gpu): Python's `ModuleNotFoundError`, before anything is traced."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path
from wgmma_lsp.rules.import_fixes import use_older_path

RULE = Rule(
    code="WG110",
    name="module-missing",
    summary="The imported JAX module is not in the installed JAX (newer than it, or removed), or "
            "a package it imports is not installed.",
    template="No module named {name!r}",
    exception="ModuleNotFoundError",
    jax_source="Python's import system, over the installed jax package's files (models/jax_imports.py)",
    doc_file=doc_path(__file__),
    fixes=use_older_path,
    table_message="`No module named 'jax.pallas'` (JAX before 0.12.1)",
    fix_summary="`jax.pallas…` → `jax.experimental.pallas…`",
)

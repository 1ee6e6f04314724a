"""Trace mode reads the same declared entry points as the static analyzer: they live on the
static side now (`wgmma_lsp.entry.declared`); this module keeps the old import path."""

from wgmma_lsp.entry.declared import (  # noqa: F401
    DTYPE_ALIASES, ENTRY_RE, PYPROJECT_KEY, EntryPoint, all_entry_points, find_pyproject,
    parse_entry_points, pyproject_entry_points, rewrite_compact_specs,
)

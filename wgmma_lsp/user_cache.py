"""Where wgmma-lsp keeps what it may recompute: the user cache directory (no other import here).

`$WGMMA_LSP_CACHE_DIR`, else `$XDG_CACHE_HOME/wgmma-lsp`, else `~/.cache/wgmma-lsp`. Its files:
the facts read from each installed JAX (interpret/jax_facts_cache.py), the imports its modules
run (interpret/jax_import_graph.py) and the code dataclasses generate (codegen_cache.py). Deleting the folder costs only the time to fill it again.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    explicit = os.environ.get("WGMMA_LSP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "wgmma-lsp"

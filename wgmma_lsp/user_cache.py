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


def write_json(path: Path, data: object, prefix: str) -> None:
    """Write `data` as JSON to `path` atomically (a temporary file in its folder, renamed over
    it), making the folder; raises OSError when that fails, having removed the temporary file."""
    import json
    import tempfile  # only here: it imports shutil, random, bz2, lzma (a check that reads the cache)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass  # renamed or never written: nothing left behind
        raise

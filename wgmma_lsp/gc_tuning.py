"""The collector's settings for wgmma-lsp's processes (server, `check`): analyses allocate many
short-lived objects and keep a large heap, so young garbage is collected less often and what
start-up made is frozen (never walked again). A leaf: the launcher reads it before any import."""

from __future__ import annotations

import gc

#: `gc.set_threshold` for every wgmma-lsp process (the fuzz benchmark measures with them too).
THRESHOLDS = (50_000, 20, 20)


def tune() -> None:
    """Set the thresholds and freeze what exists now."""
    gc.set_threshold(*THRESHOLDS)
    gc.freeze()

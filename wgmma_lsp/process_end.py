"""What a wgmma-lsp process does before it ends without Python's teardown (a finished `check`:
launch.exit_now, and each check the daemon forks: daemon.py). A leaf: `atexit` and `sys`."""

from __future__ import annotations

import sys


def finish() -> bool:
    """What the teardown does that counts: the exit handlers (the caches' writes, logging's flush,
    multiprocessing's clean-up), then the flush of stdout and stderr. False when a flush failed
    (the reader left, or a stream is closed)."""
    import atexit

    atexit._run_exitfuncs()
    flushed = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            flushed = False
    return flushed

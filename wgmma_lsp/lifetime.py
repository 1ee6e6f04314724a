"""Helper processes die with the server, even when the server is killed with SIGKILL."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """Run in a helper process (a `ProcessPoolExecutor` initializer): the kernel kills it when
    its parent dies (`PR_SET_PDEATHSIG`), and a watch thread exits it should the parent be gone
    anyway (the death signal fires when the *thread* that started the process ends, and may be
    missing outside Linux)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # died before the signal was armed
        os._exit(0)

    def watch() -> None:
        while True:
            time.sleep(POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="wgmma-lsp-parent-watch", daemon=True).start()

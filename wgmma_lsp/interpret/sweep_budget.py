"""How much of a configuration sweep (a tuning loop, pytest parameter sets) the analysis checks.

Two modes, chosen per analysis:

- `"budget"` (the server's default): all sweeps of a file together may spend
  `STEPS_PER_LINE` interpreter steps per line of the file (at least `MIN_STEPS`), which keeps
  the analysis within the typing-speed target (50 ms per 1,000 lines warm). The first
  combination of every sweep always runs; combinations the budget cuts are counted and
  reported (an information-level WG903 note on the sweep and a log line), never dropped
  silently.
- `"all"` (the default of `wgmma-lsp check`, where a few hundred milliseconds per kernel file
  do not matter): every combination is checked, up to half of the interpreter's overall step
  limit, so a sweep large enough to exhaust it still ends with a note rather than with the
  whole analysis stopped.

The mode comes from the project configuration (`sweeps = "all"` in `[tool.wgmma-lsp]`), the
command line (`wgmma-lsp check --sweeps all`), or the tool's default, and is set for the
analysis running in this context with `sweep_mode(...)`.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Iterator

MODES = ("budget", "all")
STEPS_PER_LINE = 3
MIN_STEPS = 1_000

_mode: ContextVar[str] = ContextVar("sweep_mode", default="budget")


@contextmanager
def sweep_mode(mode: str | None) -> Iterator[None]:
    """Analyse with `mode` ("budget" or "all"; None keeps the current one)."""
    if mode is None:
        yield
        return
    if mode not in MODES:
        raise ValueError(f"unknown sweep mode {mode!r} (expected one of {', '.join(MODES)})")
    token = _mode.set(mode)
    try:
        yield
    finally:
        _mode.reset(token)


def current_mode() -> str:
    return _mode.get()


def sweep_steps(n_lines: int, max_steps: int) -> int:
    """The steps all sweeps of an `n_lines`-line file may spend, in the current mode."""
    if _mode.get() == "all":
        return max_steps // 2
    return max(MIN_STEPS, STEPS_PER_LINE * n_lines)

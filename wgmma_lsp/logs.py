"""The package's logger, with `logging` imported at its first use, not at start-up.

`logging` imports `traceback` (`linecache`, `tokenize`), `weakref`, `string` and `threading`:
~8 ms of CPU of a one-file `wgmma-lsp check` at Python 3.11, which logs nothing when nothing
goes wrong. The modules on that path keep `log = logs.logger()` and call it as a
`logging.Logger`; the first attribute looked up on it (`log.warning`, `log.isEnabledFor`...)
imports `logging` and takes the real logger, `logging.getLogger(name)`, which every later look-up
goes to. Configuring `logging` (the server's handlers, pytest's `caplog`) works as before: the
logger is the same object, fetched when first used. A leaf: nothing is imported here.
"""

from __future__ import annotations


TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any
    import logging

NAME = "wgmma_lsp"


class LazyLogger:
    """`logging.getLogger(name)`, looked up when one of its attributes first is."""

    __slots__ = ("_name", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)

    def __repr__(self) -> str:
        return f"<LazyLogger {self._name}>"


def logger(name: str = NAME) -> logging.Logger:
    """The logger `name` (the package's by default), `logging` imported at its first use."""
    return LazyLogger(name)  # type: ignore[return-value]

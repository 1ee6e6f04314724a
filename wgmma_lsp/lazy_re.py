"""Regular expressions compiled when first used, not when their module is imported.

A module-level `re.compile` runs in every process that imports the module: about 0.1-0.3 ms
each, paid by a one-file `wgmma-lsp check` for patterns only some files need (the repair of a
syntax error, a `[tool.wgmma-lsp] trace` table, a `__main__` guard). `LazyPattern` keeps the
pattern's text and compiles it (once, through `re`) at its first use; it has the methods of
`re.Pattern` this package calls, with the same arguments. A leaf: it imports only `re`.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, AnyStr, Callable, Iterator


class LazyPattern:
    """`re.compile(pattern, flags)`, done at the first match, search, substitution... . (Not a
    `Generic[AnyStr]`: typing is not imported at run time; each method is generic instead.)"""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[Any] | None = None

    def compiled(self) -> re.Pattern[Any]:
        p = self._compiled
        if p is None:
            p = self._compiled = re.compile(self.pattern, self.flags)
        return p

    def match(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def search(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().search(string, pos, endpos)

    def finditer(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[AnyStr]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled().sub(repl, string, count)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"

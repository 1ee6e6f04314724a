"""The rule catalog: one module per error class JAX raises, each with its documentation beside it.

A rule module defines `RULE` (a `Rule`) and, optionally, `fixes(finding, source)`. Its
documentation is the Markdown file with the same name next to it. `registry` finds them all.

`from wgmma_lsp.rules import wgmma_shapes` (how the models name the rules they report) gives
the rule module imported at the first look-up of one of its attributes (`wgmma_shapes.RULE`,
when a finding is reported): a one-file `check` imported about a hundred rule modules, ~0.1 ms
each, for the few its file breaks. Only rule modules — a `.py` with its `.md` beside it, which
define a rule and functions and do nothing else when imported — are deferred; every other name
is imported as usual. `import wgmma_lsp.rules.x` and `importlib.import_module` (the registry)
import at once, as always.
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


class LazyRuleModule:
    """A rule module, imported when one of its attributes is first looked up (or set)."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def module(self) -> Any:
        m = self._module
        if m is None:
            m = importlib.import_module(f"{__name__}.{self._name}")
            object.__setattr__(self, "_module", m)
        return m

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.module(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self.module(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self.module(), attr)

    def __repr__(self) -> str:
        return f"<rule module {__name__}.{self._name}, {'imported' if self._module else 'not imported yet'}>"


_rule_modules: frozenset[str] | None = None


def _rule_module_names() -> frozenset[str]:
    """The names of this package's rule modules: `name.py` with `name.md` beside it."""
    global _rule_modules
    if _rule_modules is None:
        files: set[str] = set()
        for folder in __path__:
            try:
                files.update(os.listdir(folder))  # observed: wgmma-lsp's own files, not the analysed code
            except OSError:  # a folder that cannot be listed: its modules are imported as usual
                continue
        _rule_modules = frozenset(f[:-3] for f in files
                                  if f.endswith(".py") and f"{f[:-3]}.md" in files)
    return _rule_modules


def __getattr__(name: str) -> Any:
    """`from wgmma_lsp.rules import <rule module>` when it is not imported yet (PEP 562)."""
    if name in _rule_module_names():
        return LazyRuleModule(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

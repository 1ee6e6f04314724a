"""The names of the modules in a package's folders, as `pkgutil.iter_modules` lists them.

The registries (models/registry.py, rules/registry.py) import every module of their package.
`pkgutil` costs a one-file `wgmma-lsp check` ~1-1.5 ms (importing it, then an importer and a
`ModuleInfo` per file); the folders' listing is all that is needed. A leaf: `os` and `importlib`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib.machinery import all_suffixes


def _module_name(filename: str, suffixes: list[str]) -> str | None:
    """The module a file is (`inspect.getmodulename`): its name without an importable suffix."""
    for suffix in suffixes:
        if filename.endswith(suffix):
            return filename[:-len(suffix)]
    return None


def module_names(folders: Iterable[str]) -> list[str]:
    """Sorted, each once: the modules (`name.py`, a compiled extension...) and the packages (a
    folder holding an `__init__`) directly in `folders` (a package's `__path__`); an unreadable
    folder has none."""
    suffixes = sorted(all_suffixes(), key=len, reverse=True)
    found: set[str] = set()
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:  # as pkgutil: a folder that cannot be listed holds no module
            continue
        for entry in entries:
            name = _module_name(entry, suffixes)
            if name is None and "." not in entry and os.path.isdir(os.path.join(folder, entry)):
                try:
                    inside = os.listdir(os.path.join(folder, entry))
                except OSError:
                    inside = []
                if any(_module_name(f, suffixes) == "__init__" for f in inside):
                    name = entry
            if name and name != "__init__" and "." not in name:
                found.add(name)
    return sorted(found)

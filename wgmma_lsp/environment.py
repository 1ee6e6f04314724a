"""Which Python environment is analysed, and where its JAX is: found the way pyright and ty do.

The JAX whose API facts the analysis follows (interpret/jax_source.py) is the one the project
runs with, not necessarily the one next to wgmma-lsp (installed with pipx or in a tools venv,
wgmma-lsp's own environment usually has no JAX at all). In this order:

1. an explicit interpreter or environment: `--python PATH`, the editor's `wgmmaLsp.python`,
   `[tool.wgmma-lsp] python = "..."` — used as given, with or without JAX;
2. for `wgmma-lsp check` of an installed package's files (and a workspace folder inside an
   environment's site-packages, in the server), the environment they are installed in, when
   it holds JAX (`installed_in`: they run only with its JAX);
   then `VIRTUAL_ENV` (an activated environment);
3. a `.venv` or `venv` folder in the workspace root or the project root (the folder holding
   the nearest `pyproject.toml`);
4. wgmma-lsp's own environment.

The first of 2-4 that holds JAX wins; when none does, the first one found is reported as the
analysed environment and the facts bundled for the newest supported JAX are used (said once).

Nothing is run or imported to find jax: its site-packages is found from the environment's
files (`pyvenv.cfg`, `lib/python3.*/site-packages`), its version from `jax-*.dist-info/METADATA`.
An interpreter that is not a virtual environment (a system, conda or pyenv Python) is never run
either — the path may come from a workspace's own configuration: its prefix is the folder above
its `bin/`, symlinks followed.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from wgmma_lsp import logs

log = logs.logger()

VENV_NAMES = (".venv", "venv")


@dataclass(frozen=True)
class JaxEnvironment:
    """The analysed environment and the JAX found in it (root None: none there)."""

    origin: str  # how it was found: "--python", "VIRTUAL_ENV", ".venv in /proj", ...
    prefix: Path | None  # the environment's folder (None: wgmma-lsp's own, via importlib.metadata)
    jax_root: Path | None = None  # the `jax` package folder
    jax_version: str | None = None  # its distribution version, e.g. "0.12.0.1"
    searched: tuple[str, ...] = field(default=(), compare=False)  # every candidate looked at

    @property
    def where(self) -> str:
        return f"{self.prefix} ({self.origin})" if self.prefix is not None else self.origin

    def describe(self) -> str:
        """One line for `--show-settings` and the server's log."""
        if self.jax_root is not None:
            return f"jax {self.jax_version or '(unknown version)'} at {self.jax_root}, from {self.where}"
        from wgmma_lsp.interpret.jax_facts_data import bundled_version

        return (f"no JAX found in {self.where}; using the facts bundled for jax "
                f"{bundled_version()}")


def _site_dirs(prefix: Path) -> list[Path]:
    """The site-packages folders of an environment, read from its files."""
    out: list[Path] = []
    for pattern in ("lib/python3*/site-packages", "lib64/python3*/site-packages",
                    "lib/python3*/dist-packages", "lib/python3/dist-packages", "Lib/site-packages"):
        out.extend(sorted(prefix.glob(pattern), reverse=True))  # newest Python first
    cfg = _pyvenv_cfg(prefix)
    if cfg.get("include-system-site-packages", "").lower() == "true" and cfg.get("home"):
        base = Path(cfg["home"]).parent  # `home = /usr/bin` -> /usr
        if base != prefix:
            out.extend(p for p in _site_dirs(base) if p not in out)
    return [p for p in out if p.is_dir()]


@functools.lru_cache(maxsize=8)
def environment_site_dirs(prefix: Path) -> tuple[Path, ...]:
    """`_site_dirs(prefix)`, read once per environment."""
    return tuple(_site_dirs(prefix))


def _pyvenv_cfg(prefix: Path) -> dict[str, str]:
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


_VERSION_LINE = re.compile(r"^Version:\s*(\S+)", re.MULTILINE)
_VERSION_PY = re.compile(r"^_version\s*(?::\s*str\s*)?=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def find_jax(site_dirs: Iterable[Path]) -> tuple[Path | None, str | None]:
    """(the `jax` package folder, its version) in the first folder that holds one."""
    for d in site_dirs:
        root = d / "jax"
        if not (root / "__init__.py").is_file():
            continue
        for info in sorted(d.glob("jax-*.dist-info")):
            try:
                m = _VERSION_LINE.search((info / "METADATA").read_text(encoding="utf-8"))
            except OSError:
                continue
            if m:
                return root, m.group(1)
        try:  # no metadata (a source checkout on the path): jax/version.py says
            m = _VERSION_PY.search((root / "version.py").read_text(encoding="utf-8"))
        except OSError:
            m = None
        return root, m.group(1) if m else None
    return None, None


def own_jax() -> tuple[Path | None, str | None]:
    """The JAX of wgmma-lsp's own environment, from its distribution metadata (not imported):
    what `importlib.metadata.distribution("jax")` finds, read without importing
    `importlib.metadata` (its import, with `email`'s, is ~20 ms of a one-file `check`) when
    `sys.path` holds only folders; otherwise (zip or egg entries, another finder that knows
    distributions, metadata without a version) through it."""
    found = _own_jax_from_folders()
    return found if found is not None else own_jax_from_metadata()


def own_jax_from_metadata() -> tuple[Path | None, str | None]:
    """`own_jax()` as `importlib.metadata` answers it (the fallback, and the tests' reference)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("jax")
    except metadata.PackageNotFoundError:
        return None, None
    root = Path(str(dist.locate_file("jax")))
    return (root if (root / "__init__.py").exists() else None), dist.version


def _own_jax_from_folders() -> tuple[Path | None, str | None] | None:
    """`own_jax`'s answer the way `importlib.metadata` reaches it (the first `sys.path` entry
    holding a `jax-*.dist-info` or `jax-*.egg-info`, the entries' order kept), or None when that
    search might differ from its own: an entry that is a file or an `.egg`, a finder on
    `sys.meta_path` other than `PathFinder` that answers for distributions, metadata without a
    `Version` line."""
    from importlib.machinery import PathFinder

    if any(getattr(f, "find_distributions", None) is not None and f is not PathFinder
           for f in sys.meta_path):
        return None
    for entry in sys.path:
        if os.path.basename(entry).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.exists(entry or "."):  # a zip file (or unreadable): importlib's own search
                return None
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            if re.sub(r"[-_.]+", "-", low.rpartition(".")[0].partition("-")[0]).replace("-", "_") \
                    != "jax":
                continue
            info = Path(entry, child)
            version = _metadata_version(info)
            if version is None:
                return None
            root = info.parent / "jax"
            return (root if (root / "__init__.py").exists() else None), version
    return None, None


def _metadata_version(info: Path) -> str | None:
    """The `Version` header of a distribution's METADATA (else PKG-INFO), as
    `importlib.metadata` reads it; None when neither has a plain one."""
    for name in ("METADATA", "PKG-INFO"):
        try:
            text = (info / name).read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            continue
        if not text:
            continue
        lines = re.split(r"\r\n|\r|\n", text)  # the line ends `email`'s parser knows
        for i, line in enumerate(lines):
            if not line.strip():  # the headers end at the first empty line
                return None
            key, sep, value = line.partition(":")
            if not sep and line[:1] not in (" ", "\t"):
                return None  # not a header line: `email` would end the headers here
            if sep and key.lower() == "version":
                if i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t"):
                    return None  # a folded header: let `email` unfold it
                return value.lstrip(" \t") or None
        return None
    return None


def _prefix_of(python: Path) -> Path | None:
    """The environment an interpreter path (or an environment folder) belongs to, when it is a
    virtual environment: the folder holding `pyvenv.cfg`. The path's symlinks are not followed
    (a venv's `bin/python` links to the base interpreter)."""
    p = Path(os.path.abspath(os.path.expanduser(str(python))))
    for candidate in (p, p.parent, p.parent.parent):
        if (candidate / "pyvenv.cfg").is_file():
            return candidate
    return None


def _interpreter_prefix(python: Path) -> list[Path]:
    """The prefixes an interpreter that is not a venv installs into, read from the file system
    (never by running it: the path may come from a workspace's configuration, and static mode runs
    nothing of the workspace): `<prefix>/bin/python3` -> `<prefix>`, with symlinks followed (a
    conda or pyenv interpreter), and for a system `/usr` also `/usr/local` (Debian's pip target)."""
    prefixes = []
    for p in (python, Path(os.path.realpath(python))):
        prefix = p.parent.parent
        if prefix not in prefixes:
            prefixes.append(prefix)
        if prefix == Path("/usr") and Path("/usr/local") not in prefixes:
            prefixes.append(Path("/usr/local"))
    return prefixes


def explicit(python: str, origin: str, base: Path | None = None) -> JaxEnvironment:
    """The environment of a configured interpreter or environment folder (relative paths are
    relative to `base`, e.g. the configuration file's folder)."""
    path = Path(os.path.expanduser(python))
    if not path.is_absolute() and base is not None:
        path = base / path
    prefix = _prefix_of(path)
    if prefix is not None:
        root, version = find_jax(_site_dirs(prefix))
        return JaxEnvironment(origin, prefix, root, version, (str(prefix),))
    if path.is_dir():  # a prefix without pyvenv.cfg (conda, a system prefix)
        root, version = find_jax(_site_dirs(path))
        return JaxEnvironment(origin, path, root, version, (str(path),))
    if not path.is_file():
        log.warning("%s: %s does not exist", origin, path)
        return JaxEnvironment(origin, path, None, None, (str(path),))
    sites = [d for prefix in _interpreter_prefix(path) for d in _site_dirs(prefix)]
    root, version = find_jax(dict.fromkeys(sites))
    return JaxEnvironment(origin, path, root, version, (str(path),))


def installed_in(path: Path) -> Path | None:
    """The environment whose site-packages hold `path` (a file or folder of an installed
    package): the folder above that `site-packages`/`dist-packages` holding `pyvenv.cfg` (or
    `conda-meta`), else None. Such a file runs only with that environment's JAX."""
    p = Path(os.path.abspath(path))
    for d in p.parents:
        if d.name in ("site-packages", "dist-packages"):
            for prefix in list(d.parents)[:3]:  # lib/python3.X/site-packages, Lib/site-packages
                if (prefix / "pyvenv.cfg").is_file() or (prefix / "conda-meta").is_dir():
                    return prefix
            return None
    return None


def installed_environment(path: str | os.PathLike[str]) -> JaxEnvironment | None:
    """The environment `path` (a file or folder of an installed package) is installed in, when
    it holds JAX: such files run only with its JAX (`installed_in`). None otherwise."""
    home = installed_in(Path(path))
    if home is None:
        return None
    env = _jax_of_environment(str(home))
    if env.jax_root is None:
        return None
    return replace(env, origin=f"the environment {path} is installed in")


def other_jax(path: str | os.PathLike[str]) -> JaxEnvironment | None:
    """The environment `path` is installed in, when its JAX is another version than the analysed
    one's (a library file from another virtualenv: it runs only with that JAX, and the analysed
    JAX's facts would give it another JAX's findings). None otherwise."""
    there = installed_environment(path)
    if there is None or there.jax_version == active().jax_version:
        return None
    return there


def other_jax_note(path: str | os.PathLike[str] | None) -> str | None:
    """What to say instead of analysing a file `other_jax` finds (None: analyse it)."""
    there = other_jax(path) if path else None
    if there is None:
        return None
    return (f"not analysed: this file is installed in {there.prefix}, which runs it with jax "
            f"{there.jax_version}, and this run follows {active().describe()} (its findings "
            f"would be another JAX's): open its folder, or point the python setting "
            f"(wgmmaLsp.python, --python) at {there.prefix}")


@functools.lru_cache(maxsize=32)
def _jax_of_environment(home: str) -> JaxEnvironment:
    return explicit(home, f"the environment {home}")


def project_root(start: Path) -> Path | None:
    """The folder holding the nearest `pyproject.toml` above `start` (a file or a folder)."""
    folder = Path(os.path.abspath(start))
    if not folder.is_dir():
        folder = folder.parent
    for d in (folder, *folder.parents):
        if (d / "pyproject.toml").is_file():
            return d
    return None


def _candidates(roots: Sequence[Path]) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        out.append(("VIRTUAL_ENV", Path(venv)))
    for root in roots:
        for name in VENV_NAMES:
            if (root / name / "pyvenv.cfg").is_file():
                out.append((f"{name} in {root}", root / name))
    return out


def discover(python: str | None = None, origin: str = "python setting",
             roots: Sequence[Path] = (), base: Path | None = None) -> JaxEnvironment:
    """The analysed environment (see the module's doc for the order). `roots`: the workspace
    folders and project roots whose `.venv`/`venv` count."""
    if python:
        return explicit(python, origin, base)
    seen: list[str] = []
    first: JaxEnvironment | None = None
    unique_roots = list(dict.fromkeys(Path(os.path.abspath(r)) for r in roots))
    for label, prefix in _candidates(unique_roots):
        if str(prefix) in seen:
            continue
        seen.append(str(prefix))
        root, version = find_jax(_site_dirs(prefix))
        env = JaxEnvironment(label, prefix, root, version)
        if root is not None:
            return JaxEnvironment(label, prefix, root, version, tuple(seen))
        first = first or env
    root, version = own_jax()
    seen.append(f"wgmma-lsp's own environment ({sys.prefix})")
    if root is not None:
        return JaxEnvironment("wgmma-lsp's own environment", Path(sys.prefix), root, version,
                              tuple(seen))
    if first is not None:
        return JaxEnvironment(first.origin, first.prefix, None, None, tuple(seen))
    return JaxEnvironment("wgmma-lsp's own environment", Path(sys.prefix), None, None, tuple(seen))


# -- the environment this process analyses -----------------------------------------------------

_active: JaxEnvironment | None = None


def active() -> JaxEnvironment:
    """The analysed environment: the one `activate` chose, else wgmma-lsp's own."""
    global _active
    if _active is None:
        root, version = own_jax()
        _active = JaxEnvironment("wgmma-lsp's own environment", Path(sys.prefix), root, version,
                                 (f"wgmma-lsp's own environment ({sys.prefix})",))
    return _active


#: Called when the analysed JAX changes (`on_change`).
_change_hooks: list = []


def on_change(hook) -> None:
    """Call `hook()` whenever `activate` changes the analysed JAX (what was read from the old
    JAX is dropped: interpret/jax_facts.py registers here)."""
    _change_hooks.append(hook)


def activate(env: JaxEnvironment) -> bool:
    """Analyse with `env`'s JAX from now on (every cached JAX fact is dropped). Returns whether
    the JAX changed."""
    global _active
    old = _active
    _active = env
    changed = old is None or (old.jax_root, old.jax_version) != (env.jax_root, env.jax_version)
    if changed:
        for hook in _change_hooks:  # the JAX facts read so far (interpret/jax_facts.py) are dropped
            hook()
        lookup = sys.modules.get("wgmma_lsp.program.lookup")
        if lookup is not None:  # it keeps where jax is
            lookup.installed_jax_parent.cache_clear()
    return changed

"""Whether a top-level package can be imported in the analysed environment, read from its folders.

`importable("absl")` looks where Python's path-based finder would, without importing anything:
the environment's site-packages folders (and the one holding its `jax`), the folders its `.pth`
files add, the user's `PYTHONPATH`, and the standard library (this Python's list of its modules,
or the analysed Python's `lib/python3.X` when that is another version). It answers:

- True: found (a folder or a file `absl`, `absl.py`, `absl.*.so`, ...), or named by a `.pth` line
  that runs code or by an editable install's finder (they may provide it: not proven absent);
- False: looked everywhere it could be, and it is not there;
- None: cannot be told (no analysed environment, its standard library not found).

Every folder listing goes through `observed`: a `check` result that said "missing" is stale once
the package is installed.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from wgmma_lsp import environment, observed
from wgmma_lsp.lazy_re import LazyPattern

_VERSION_DIR = re.compile(r"python(3\.\d+)$")


def _entries(folder: Path) -> list[str] | None:
    try:
        return observed.listdir(folder)
    except OSError:
        return None


def _python_version(site_dirs: tuple[Path, ...]) -> str | None:
    for d in site_dirs:
        m = _VERSION_DIR.search(d.parent.name)
        if m:
            return m.group(1)
    return None


def _standard_dirs(prefix: Path, version: str) -> list[Path]:
    """The analysed Python's standard library folders (`lib/python3.X`, its `lib-dynload`)."""
    bases = [prefix]
    try:
        cfg = observed.read_text(prefix / "pyvenv.cfg")
    except OSError:
        cfg = ""
    for line in cfg.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "home":
            bases.append(Path(value.strip()).parent)
    out = []
    for base in bases:
        lib = base / "lib" / f"python{version}"
        if observed.isfile(lib / "os.py"):
            out += [lib, lib / "lib-dynload"]
    return out


_answers: dict[tuple, dict[tuple[str, str], object]] = {}


def state() -> tuple:
    """What the answers here depend on: the analysed environment, the modification times of its
    site-packages folders (an install or removal changes them) and `PYTHONPATH`."""
    env = environment.active()
    stamps = []
    for d in environment.environment_site_dirs(env.prefix) if env.prefix is not None else ():
        try:
            stamps.append((str(d), observed.stat(d).st_mtime_ns))
        except OSError:
            stamps.append((str(d), None))
    return (env.prefix, env.jax_root, tuple(stamps), os.environ.get("PYTHONPATH", ""))


def answers() -> dict:
    """The table of answers for the environment as it is now (`state()` looked at once): what
    `importable`, `requirements` and the callers of `remembered` computed while it was the same."""
    now = state()
    table = _answers.get(now)
    if table is None:
        _answers.clear()
        table = _answers[now] = {}
    return table


def remembered(table: dict, kind: str, key: str, compute):
    """`compute()`, kept in `table` (from `answers()`)."""
    if (kind, key) not in table:
        table[(kind, key)] = compute()
    return table[(kind, key)]


def importable(name: str, table: dict | None = None) -> bool | None:
    """Can `import name` (a top-level package) find it in the analysed environment?"""
    if name in sys.stdlib_module_names:
        return True
    table = answers() if table is None else table
    return remembered(table, "importable", name, lambda: _importable(name, table))


def _module_names(names: list[str]) -> set[str]:
    return {n.split(".")[0] for n in names if not n.endswith((".dist-info", ".egg-info", ".pth"))}


def _search_path() -> tuple[set[str], str] | None:
    """What the path finder of the analysed environment can find at the top level: the names of
    the folders and modules on its path, and the text of the code its `.pth` files and editable
    installs run (which may install finders of their own). None: no environment."""
    env = environment.active()
    if env.prefix is None:
        return None
    site_dirs = environment.environment_site_dirs(env.prefix)
    folders = list(site_dirs)
    if env.jax_root is not None and env.jax_root.parent not in folders:
        folders.append(env.jax_root.parent)
    folders += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    code: list[str] = []
    for site in site_dirs:
        for entry in _entries(site) or []:
            if entry.endswith(".pth") or (entry.startswith("__editable__") and entry.endswith(".py")):
                try:
                    text = observed.read_text(site / entry, errors="replace")
                except OSError:
                    return None
                code.append(text)
                if entry.endswith(".pth"):
                    folders += [site / line.strip() for line in text.splitlines()
                                if line.strip() and not line.startswith(("#", "import ", "import\t"))]
    names: set[str] = set()
    for folder in folders:
        names |= _module_names(_entries(folder) or [])
    return names, "\n".join(code)


def _is_word_char(c: str) -> bool:
    """`re`'s `\\w` for one character of a `str` pattern: alphanumeric (Unicode) or `_`."""
    return c.isalnum() or c == "_"


def _word_in(name: str, text: str) -> bool:
    """`re.search(rf"\\b{re.escape(name)}\\b", text)`, without compiling a pattern per name (a
    one-file check asked for ~15 names, ~1.3 ms of compiling): an occurrence of `name` with no
    word character on either side. For a name made of word characters (a package's); any
    other is searched with the pattern itself."""
    if not name or not all(map(_is_word_char, name)):
        return re.search(rf"\b{re.escape(name)}\b", text) is not None
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not _is_word_char(text[at - 1])) and \
                (end == len(text) or not _is_word_char(text[end])):
            return True
        at = text.find(name, at + 1)
    return False


def _importable(name: str, table: dict) -> bool | None:
    found = remembered(table, "search-path", "", _search_path)
    if found is None:
        return None
    names, code = found
    if name in names or _word_in(name, code):
        return True  # there, or a finder or a path that may provide it: not proven absent
    env = environment.active()
    site_dirs = environment.environment_site_dirs(env.prefix)
    version = _python_version(site_dirs)
    if version is None:
        return None
    if version != f"{sys.version_info.major}.{sys.version_info.minor}":
        standard = _standard_dirs(env.prefix, version)
        if not standard:
            return None
        if any(name in _module_names(_entries(folder) or []) for folder in standard):
            return True
    return False


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_REQUIRES = LazyPattern(r"^Requires-Dist:\s*([A-Za-z0-9][A-Za-z0-9._-]*)([^\n]*)", re.MULTILINE)
_EXTRA = LazyPattern(r";.*\bextra\s*==")


def _distribution(package: str) -> Path | None:
    """The `*.dist-info` folder of the distribution that installs top-level `package`: the one
    named like it, else the one whose `top_level.txt` lists it."""
    env = environment.active()
    if env.prefix is None:
        return None
    sites = environment.environment_site_dirs(env.prefix)
    want = _normal(package)
    infos = [(site, n) for site in sites for n in (_entries(site) or []) if n.endswith(".dist-info")]
    for site, n in infos:
        if _normal(n[:-len(".dist-info")].rsplit("-", 1)[0]) == want:
            return site / n
    for site, n in infos:
        try:
            tops = observed.read_text(site / n / "top_level.txt").split()
        except OSError:
            continue
        if package in tops:
            return site / n
    return None


def requirements(package: str, table: dict | None = None) -> set[str] | None:
    """See `_requirements` (kept while the environment is unchanged)."""
    table = answers() if table is None else table
    return remembered(table, "requirements", package, lambda: _requirements(package))


def _requirements(package: str) -> set[str] | None:
    """The distributions top-level `package` requires, directly or not (normalised names; every
    marker counts but `extra == ...`: what an install without extras has and the package may
    import); None when its metadata is not found."""
    first = _distribution(package)
    if first is None:
        return None
    out: set[str] = set()
    todo = [first]
    while todo:
        info = todo.pop()
        try:
            text = observed.read_text(info / "METADATA", errors="replace")
        except OSError:
            return None
        for name in (_normal(m.group(1)) for m in _REQUIRES.finditer(text) if not _EXTRA.search(m.group(2))):
            if name not in out:
                out.add(name)
                nxt = _distribution(name)
                if nxt is not None:
                    todo.append(nxt)
    return out


def may_provide(distributions: set[str], package: str) -> bool:
    """Might one of `distributions` be the one that installs top-level `package` (`absl` is
    installed by `absl-py`)? A name that starts with the other counts (errs towards yes)."""
    want = _normal(package)
    return any(d.startswith(want) or want.startswith(d) for d in distributions)


def analysed_python() -> tuple[int, int] | None:
    """The analysed environment's Python version, from its `lib/python3.X` folder (this Python's
    for wgmma-lsp's own environment); None when it cannot be told."""
    env = environment.active()
    if env.prefix is None or Path(env.prefix) == Path(sys.prefix):
        return sys.version_info[:2]
    version = _python_version(environment.environment_site_dirs(env.prefix))
    if version is None:
        return None
    major, minor = version.split(".")
    return int(major), int(minor)

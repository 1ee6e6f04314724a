"""Finding the user's modules on disk: static file lookup, as Python's path finder would, without
importing anything.

Search roots, in order: the directory above the top package that holds the importing file (what
pytest's rootdir insertion and `python -m` give), the importing file's own directory (a script's
`sys.path[0]`), the workspace roots (and their `src/`), and the environment's extra paths:
`PYTHONPATH` and the directories that `.pth` files of the environment's site-packages list
(editable installs of the user's package, also setuptools' finder modules, read as data). Site-packages and the standard library are not
roots: third-party and standard modules are not the user's, and JAX's are known by name — except
JAX's kernel-ops package `jax.experimental.pallas.ops` (kernels that import each other, like
`ragged_dot_mgpu.GroupInfo`), whose modules are found in the installed jax and read like the
user's (`find_kernel_ops`) — and a file's own installed package: a module of
`site-packages/tokamax` opened as a program reads `tokamax.*` from there (`own_package`), and
its folder is no script directory (`import jaxtyping` in `tokamax/_src/jaxtyping.py` is not itself).
The project's own virtualenvs (`.venv`, `venv`, `env` in a workspace root, `$VIRTUAL_ENV`) are
read the same way, so a package installed there with `pip install -e` is found.

Namespace packages (PEP 420: folders without `__init__.py`, such as tokamax's
`_src/ops/experimental/routing_moe/gmm/`) are resolved as importlib's path finder resolves them
(`find_in`): a regular package or module of the name anywhere on the search path wins, else all
the folders of that name are the package's portions (`Namespace`), whose attributes are only
their submodules.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig

from wgmma_lsp import observed


def _is_environment_dir(d: str) -> bool:
    """site-packages, dist-packages and the standard library."""
    name = os.path.basename(d.rstrip(os.sep))
    if name in ("site-packages", "dist-packages"):
        return True
    return d in _stdlib_dirs()


@functools.lru_cache(maxsize=1)
def _stdlib_dirs() -> frozenset[str]:
    out = set()
    for key in ("stdlib", "platstdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            out.add(os.path.normpath(p))
    return frozenset(out)


@functools.lru_cache(maxsize=32)
def environment_roots(site_dirs: tuple[str, ...] = ()) -> tuple[str, ...]:
    """PYTHONPATH entries and the directories the environments' `.pth` files list (editable
    installs): the server's own site-packages and `site_dirs` (the project's virtualenvs).

    `.pth` lines that start with `import` are code: never run. The one such line setuptools
    writes for an editable install names a finder module whose `MAPPING` literal (package ->
    directory) is read with `ast.literal_eval`."""
    roots: list[str] = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and observed.isdir(entry):
            roots.append(os.path.abspath(entry))
    own = list(getattr(site, "getsitepackages", lambda: [])()) + [p for p in sys.path if p.endswith("-packages")]
    for sp in dict.fromkeys(list(site_dirs) + own):
        try:
            names = sorted(observed.listdir(sp))
        except OSError:
            continue
        for n in names:
            if n.endswith(".pth"):
                roots += _pth_dirs(sp, n)
            elif n.startswith("__editable__") and n.endswith("_finder.py"):
                roots += _finder_roots(os.path.join(sp, n))
    return tuple(dict.fromkeys(roots))


def _pth_dirs(sp: str, name: str) -> list[str]:
    try:
        text = observed.read_text(os.path.join(sp, name), errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines()[:50]:
        line = line.strip()
        if not line or line.startswith(("#", "import ", "import\t")):
            continue
        p = line if os.path.isabs(line) else os.path.join(sp, line)
        if observed.isdir(p) and not _is_environment_dir(os.path.normpath(p)):
            out.append(os.path.abspath(p))
    return out


def _finder_roots(finder: str) -> list[str]:
    """The directories above the packages a setuptools editable finder maps (read, not run)."""
    import ast

    try:
        tree = ast.parse(observed.read_text(finder, errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    out = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        if any(isinstance(t, ast.Name) and t.id == "MAPPING" for t in targets):
            try:
                mapping = ast.literal_eval(node.value)
            except (ValueError, SyntaxError):
                continue
            if isinstance(mapping, dict):
                for name, directory in mapping.items():
                    if isinstance(name, str) and isinstance(directory, str) \
                            and os.path.basename(directory.rstrip(os.sep)) == name.split(".")[-1]:
                        out.append(os.path.dirname(directory.rstrip(os.sep)))
    return out


@functools.lru_cache(maxsize=32)
def project_site_dirs(workspace_roots: tuple[str, ...]) -> tuple[str, ...]:
    """site-packages of the project's virtualenvs: `.venv`, `venv`, `env` in a workspace root
    (those with a `pyvenv.cfg`), and `$VIRTUAL_ENV`/`$CONDA_PREFIX` (the editor's environment)."""
    envs = [os.path.join(w, d) for w in workspace_roots for d in (".venv", "venv", "env", ".env")]
    envs += [os.environ[v] for v in ("VIRTUAL_ENV", "CONDA_PREFIX") if os.environ.get(v)]
    out: list[str] = []
    for env in envs:
        if not observed.isfile(os.path.join(env, "pyvenv.cfg")) and not observed.isdir(os.path.join(env, "conda-meta")):
            continue
        out += [str(p) for p in observed.glob(env, "lib/python3*/site-packages")]
        out += [p for p in [os.path.join(env, "Lib", "site-packages")] if observed.isdir(p)]
    return tuple(dict.fromkeys(out))


def search_roots(from_path: str | None, workspace_roots: tuple[str, ...]) -> tuple[str, ...]:
    roots: list[str] = []
    # A module of an installed package is imported, never run as a script: its folder is not on
    # `sys.path` (`import jaxtyping` in `tokamax/_src/jaxtyping.py` is the third-party package),
    # and its own package is found through `own_package`.
    if from_path and own_package(from_path) is None:
        d = os.path.dirname(os.path.abspath(from_path))
        top = d
        while observed.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
            top = os.path.dirname(top)
        roots += [top, d]
    for w in workspace_roots:
        roots += [w, os.path.join(w, "src")]
    roots += environment_roots(project_site_dirs(tuple(workspace_roots)))
    return tuple(r for r in dict.fromkeys(os.path.normpath(r) for r in roots)
                 if not _is_environment_dir(r) and observed.isdir(r))


#: How far above an importing file its own package's top is looked for (package nesting depth).
MAX_PACKAGE_DEPTH = 16


def own_package(from_path: str | None) -> tuple[str, str] | None:
    """(the directory above the importing file's top package, that package's name), when the
    file sits in an environment folder (site-packages, dist-packages): an installed package
    opened as a program reads its own modules — `from tokamax._src.ops import op` in a file of
    `site-packages/tokamax` — though site-packages is never a search root for other names
    (third-party modules are not the user's).

    The top package is the first folder below the environment folder on the file's path, so a
    namespace package (no `__init__.py`, `site-packages/google/...`) counts as well; outside an
    environment folder the top package's parent is already a search root (`search_roots`).
    Paths are walked by name (`os.path.dirname`), never through links, so a symlink loop
    cannot make the walk endless."""
    if not from_path:
        return None
    d = os.path.dirname(os.path.abspath(from_path))
    for _ in range(MAX_PACKAGE_DEPTH):
        parent = os.path.dirname(d)
        if parent == d:
            return None
        if _is_environment_dir(parent):
            top = os.path.basename(d)
            return (parent, top) if top.isidentifier() else None
        d = parent
    return None


class Namespace:
    """A namespace package (PEP 420): folders named like it that hold no `__init__.py`, found
    where no folder searched holds a regular package or a module of that name. Its `__path__` is
    all of them (`portions`, in search order): a submodule may live in any. It has no attributes
    of its own but its submodules."""

    __slots__ = ("portions",)

    def __init__(self, portions: tuple[str, ...]) -> None:
        self.portions = portions

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Namespace) and other.portions == self.portions

    def __hash__(self) -> int:
        return hash(self.portions)

    def __repr__(self) -> str:
        return f"Namespace({self.portions!r})"


def find_in(folders: tuple[str, ...] | list[str], name: str) -> str | Namespace | None:
    """One name looked up in `folders` (a search path, or a package's `__path__`) as importlib's
    path finder does: in each folder in order, a regular package (`name/__init__.py`) or a
    module (`name.py`) wins at once; a folder `name/` without `__init__.py` is a namespace
    portion, remembered, and all of them are the namespace package when no folder has a regular
    package or module of that name."""
    portions: list[str] = []
    for folder in folders:
        base = os.path.join(folder, name)
        init = os.path.join(base, "__init__.py")
        if observed.isfile(init):
            return init
        f = base + ".py"
        if observed.isfile(f):
            return f
        if observed.isdir(base):
            portions.append(base)
    return Namespace(tuple(portions)) if portions else None


def submodule_path(found: str | Namespace) -> tuple[str, ...]:
    """Where the submodules of a module found are looked up (its `__path__`): a regular
    package's folder, a namespace package's portions; none for a plain module."""
    if isinstance(found, Namespace):
        return found.portions
    return (os.path.dirname(found),) if is_package(found) else ()


def find_module(folders: tuple[str, ...] | list[str], parts: list[str]) -> str | Namespace | None:
    """Module `a.b.c` (parts [a, b, c]) from the search path `folders`: `a` there, then `b` in
    `a`'s `__path__`, and so on (`find_in`). One step a part, so a link loop cannot make it
    endless."""
    found: str | Namespace | None = None
    path = tuple(folders)
    for part in parts:
        if not path:
            return None  # a plain module has no submodules
        found = find_in(path, part)
        if found is None:
            return None
        path = submodule_path(found)
    return found


def module_file(directory: str, parts: list[str]) -> str | None:
    """`directory/a/b.py` or `directory/a/b/__init__.py` for parts [a, b] (the folders on the
    way may be namespace packages); None for a namespace package."""
    found = find_module((directory,), parts)
    return found if isinstance(found, str) else None


@functools.lru_cache(maxsize=1)
def installed_jax_parent() -> str | None:
    """The directory holding the analysed environment's `jax` package (environment.py; jax is
    not imported), or None without jax."""
    from wgmma_lsp.environment import active

    pkg = active().jax_root
    if pkg is None:
        return None
    pkg_dir = os.path.abspath(str(pkg))
    if not observed.isfile(os.path.join(pkg_dir, "__init__.py")):
        return None
    return os.path.dirname(pkg_dir)


def find_kernel_ops(dotted: str) -> str | None:
    """The file of a module of jax's kernel-ops package (`jax.experimental.pallas.ops...`) in
    the installed jax; None for any other module or without jax."""
    from wgmma_lsp.interpret.resolve import is_kernel_ops

    parts = dotted.split(".")
    if not is_kernel_ops(dotted) or not all(p.isidentifier() for p in parts):
        return None
    parent = installed_jax_parent()
    return module_file(parent, parts) if parent is not None else None


def find_absolute(dotted: str, roots: tuple[str, ...],
                  own: tuple[str, str] | None = None) -> str | Namespace | None:
    """The file of module `dotted`, or the namespace package it names: jax's kernel ops, the
    importing file's own installed package (`own`, see `own_package`), then the search roots as
    one search path (`find_module`). A top-level namespace package found in the roots is none
    when the environment has a regular package or module of that name (`_installed`): Python
    would import that one, which is not the user's."""
    parts = dotted.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    ops = find_kernel_ops(dotted)
    if ops is not None:
        return ops
    if own is not None and parts[0] == own[1]:
        f = find_module((own[0],), parts)
        if f is not None:
            return f
    top = find_in(roots, parts[0])
    if top is None or (isinstance(top, Namespace) and _installed(parts[0])):
        return None
    return find_module(submodule_path(top), parts[1:]) if len(parts) > 1 else top


def _installed(name: str) -> bool:
    """Does the analysed environment (its site-packages, the folder holding its jax, the standard
    library) have a regular package, a module or an extension module named `name`?"""
    if name in sys.stdlib_module_names:
        return True
    from importlib.machinery import EXTENSION_SUFFIXES

    from wgmma_lsp.environment import active, environment_site_dirs

    env = active()
    folders = [str(d) for d in environment_site_dirs(env.prefix)] if env.prefix is not None \
        else list(getattr(site, "getsitepackages", lambda: [])())
    if env.jax_root is not None:
        folders.append(os.path.dirname(os.path.abspath(str(env.jax_root))))
    for folder in dict.fromkeys(folders):
        base = os.path.join(folder, name)
        if observed.isfile(os.path.join(base, "__init__.py")) or any(
                observed.isfile(base + suffix) for suffix in (".py", *EXTENSION_SUFFIXES)):
            return True
    return False


def relative_base(from_path: str | None, level: int) -> str | None:
    """The package directory `from .` (level 1), `from ..` (level 2), ... refer to."""
    if not from_path or level < 1:
        return None
    d = os.path.dirname(os.path.abspath(from_path))
    for _ in range(level - 1):
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return d


def find_relative(from_path: str | None, level: int, module: str | None) -> str | Namespace | None:
    """The module `from .module` (dots: `level`) names: the package's `__init__.py` without a
    module; else its submodule, looked up in the package's folder (a namespace package's other
    portions are not searched)."""
    base = relative_base(from_path, level)
    if base is None:
        return None
    if not module:
        init = os.path.join(base, "__init__.py")
        return init if observed.isfile(init) else None
    return find_module((base,), module.split("."))


def is_package(path: str) -> bool:
    return os.path.basename(path) == "__init__.py"

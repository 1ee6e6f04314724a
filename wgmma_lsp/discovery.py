"""Which files `wgmma-lsp check PATH…` reads: folders walked the way ruff walks them.

Skipped while walking a folder: version-control folders, virtualenvs (any folder holding a
`pyvenv.cfg`), `site-packages`, `node_modules`, caches and build outputs (`DEFAULT_EXCLUDE`,
replaced by the `exclude` setting and extended by `extend-exclude`), and whatever the
`.gitignore` files above and inside the walked folders ignore. Files named on the command line
are always checked, as ruff does.

Symlinks to folders are followed (as ruff does), but each folder is walked once, known by its
(device, inode): a link back to a folder above (`up -> ..`, `self -> .`) or to one already walked
is skipped, so a symlink loop cannot make the walk endless.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:  # imported where a spec is built: ~30 ms that a run on named files skips
    import pathspec

#: Folder and file name patterns never walked into (gitignore syntax), as ruff's defaults.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox",
    ".venv", ".vscode", "__pypackages__", "__pycache__", "_build", "buck-out", "build", "dist",
    "node_modules", "site-packages", "dist-packages", "venv", "*.egg-info",
)


@dataclass(frozen=True)
class Found:
    """A Python file to check, and how it was reached."""
    path: Path
    explicit: bool  # named on the command line (always checked, even if excluded)


@dataclass(frozen=True)
class _Ignore:
    """Ignore patterns and the folder they are relative to."""
    base: Path  # the folder the patterns are relative to
    spec: pathspec.GitIgnoreSpec

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!pattern`; None: no pattern matched."""
        # (`path.relative_to(self.base).as_posix()`, on the strings: both are absolute and
        # normalised, and pathlib's version was a fifth of walking a large package)
        p, base = str(path), str(self.base)
        if p == base or not os.path.isabs(base):
            return None if p == base else self._relative_verdict(path, is_dir)
        if base.endswith(os.sep):  # the file system's root
            rel = p[len(base):] if p.startswith(base) else None
        else:
            rel = p[len(base) + 1:] if p.startswith(base) and p[len(base):len(base) + 1] == os.sep else None
        if not rel:
            return None
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        return self.spec.check_file(rel + "/" if is_dir else rel).include

    def _relative_verdict(self, path: Path, is_dir: bool) -> bool | None:
        """`verdict` for a base that is not absolute, through pathlib."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        if rel in ("", "."):
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def exclude_spec(patterns: Iterable[str], base: Path) -> _Ignore:
    import pathspec

    return _Ignore(base, pathspec.GitIgnoreSpec.from_lines(list(patterns)))


def is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file()


def _gitignore(folder: Path) -> _Ignore | None:
    f = folder / ".gitignore"
    try:
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if not lines:
        return None
    import pathspec

    return _Ignore(folder, pathspec.GitIgnoreSpec.from_lines(lines))


def _ancestor_gitignores(folder: Path) -> list[_Ignore]:
    """The .gitignore files above `folder`, up to the repository root (outermost first)."""
    out: list[_Ignore] = []
    for parent in _abs(folder).parents:
        g = _gitignore(parent)
        if g is not None:
            out.append(g)
        if (parent / ".git").exists():
            break
    else:
        return []  # not in a git repository: ancestors' .gitignore files do not apply
    out.reverse()
    # A folder named on the command line is checked even if git ignores it (or a folder above
    # it): then the patterns above it, written for the rest of the repository, do not apply.
    here = _abs(folder)
    for f in [here, *here.parents]:
        if _ignored(f, True, out):
            return []
        if (f / ".git").exists():
            break
    return out


def _ignored(path: Path, is_dir: bool, ignores: list[_Ignore]) -> bool:
    verdict = False
    for ig in ignores:  # outermost first: the innermost match decides, as in git
        v = ig.verdict(path, is_dir)
        if v is not None:
            verdict = v
    return verdict


def python_files(paths: Iterable[str | Path], *,
                 excludes: Callable[[Path], list[_Ignore]] | None = None,
                 respect_gitignore: bool = True) -> Iterator[Found]:
    """Every Python file to check under `paths`, in a stable order.

    `excludes(folder)` gives the exclude patterns that apply inside a walked root (from the
    configuration); by default `DEFAULT_EXCLUDE` relative to the root."""
    seen: set[Path] = set()
    walked: set[tuple[int, int]] = set()  # (st_dev, st_ino) of every folder walked, all roots
    for p in map(Path, paths):
        if not p.is_dir():
            key = p.resolve() if p.exists() else p
            if key not in seen:
                seen.add(key)
                yield Found(p, True)
            continue
        rules = excludes(p) if excludes is not None else [exclude_spec(DEFAULT_EXCLUDE, _abs(p))]
        ignores = _ancestor_gitignores(p) if respect_gitignore else []
        for f in _walk(p, rules, ignores, respect_gitignore, walked):
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                yield Found(f, False)


def _abs(p: Path) -> Path:
    return Path(os.path.abspath(p))


def _folder_key(path: Path) -> tuple[int, int] | None:
    """What identifies a folder however it is reached (through symlinks or not)."""
    try:
        st = os.stat(path)  # follows symlinks: the folder itself
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _walk(root: Path, rules: list[_Ignore], ignores: list[_Ignore], respect_gitignore: bool,
          walked: set[tuple[int, int]] | None = None) -> Iterator[Path]:
    """Files under `root`, named from `root` as given; patterns are matched on absolute paths.
    Each folder is walked once (`walked`: the (device, inode) of those already walked)."""
    walked = set() if walked is None else walked
    stack: list[tuple[Path, Path, list[_Ignore]]] = [(root, _abs(root), ignores)]
    while stack:
        folder, absolute, inherited = stack.pop()
        key = _folder_key(absolute)
        if key is None or key in walked:  # gone, or reached again through a symlink (a loop)
            continue
        walked.add(key)
        if respect_gitignore:
            g = _gitignore(absolute)
            inherited = inherited + [g] if g is not None else inherited
        try:
            entries = sorted(os.scandir(absolute), key=lambda e: e.name)
        except OSError:
            continue
        subfolders: list[tuple[Path, Path, list[_Ignore]]] = []
        for e in entries:
            try:
                is_dir = e.is_dir()  # follows symlinks, as ruff does
            except OSError:
                continue
            path = absolute / e.name
            if _ignored(path, is_dir, rules) or _ignored(path, is_dir, inherited):
                continue
            if is_dir:
                if e.name == ".git" or is_virtualenv(path):
                    continue
                subfolders.append((folder / e.name, path, inherited))
            elif e.name.endswith(".py") and e.is_file():
                yield folder / e.name
        stack.extend(reversed(subfolders))

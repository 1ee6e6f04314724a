"""What an analysis learnt from the file system, so that `check`'s result cache knows when a
result is stale (results_cache.py).

Every look the analysis layers take at the disk (a module's text, a lookup's probe, a folder's
listing, JAX's source) goes through the functions here. They act as `os`/`pathlib` do and, while
recording is on (`check` with its cache), note what they saw:

- `("f", path)`: the file's (mtime_ns, size), or None when it is not a regular file (what was
  read, or stat-ed); the result cache adds the digest of its bytes, so that a file whose
  stamp changed but not its content (a fresh checkout, `touch`) still holds;
- `("e", path)`: whether it is a regular file (a lookup's probe: its content is not read);
- `("d", path)`: whether it is a folder;
- `("l", path)`: a digest of the sorted names in the folder, or None when it cannot be listed;
- `("g", folder + "\0" + pattern)`: a digest of the sorted paths `Path(folder).glob(pattern)`
  matched; `("r", ...)` the same for `rglob`.

The log only grows during a process: an analysis that reuses what an earlier one read (the
program layer's summaries, a lookup's cache) depends on it through the log as it stood then,
which the later analysis' snapshot includes. A result therefore depends on a superset of what
it read: a change can invalidate more than it must, never less. `still_true` says whether an
observation still holds (the cache's check, one look per observation).
"""

from __future__ import annotations

import os
import stat as _stat_kind
from pathlib import Path

from wgmma_lsp.digest import blake2b

Observation = tuple[str, str]

_log: dict[Observation, object] | None = None  # None: not recording (the server, tests)
_looked = False  # the disk was looked at while not recording: a log begun now misses it


def start() -> bool:
    """Record from now on, for good (the log only grows). False, and no log, when the disk was
    already looked at in this process (a run of `check` inside a test session): what earlier
    analyses read and left in caches would be missing from it, so nothing can be cached."""
    global _log
    if _log is None and not _looked:
        _log = {}
    return _log is not None


def recording() -> bool:
    return _log is not None


def snapshot() -> list[tuple[str, str, object]]:
    """Everything observed so far in this process, as (kind, path, what was seen)."""
    return [] if _log is None else [(k, p, v) for (k, p), v in _log.items()]


def note(kind: str, path: str, seen: object) -> None:
    """Record a fact of another kind (results_cache.py checks those it defines)."""
    global _looked
    if _log is None:
        _looked = True
    elif (kind, path) not in _log:
        _log[(kind, path)] = seen


def _noting() -> bool:
    """Whether a look is recorded (the server never records: it pays for no stamp or digest)."""
    global _looked
    if _log is None:
        _looked = True
        return False
    return True


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return _stamp_of(st)


def _stamp_of(st: os.stat_result) -> tuple[int, int] | None:
    return (st.st_mtime_ns, st.st_size) if _stat_kind.S_ISREG(st.st_mode) else None


def file_stamp(path: str) -> tuple[int, int] | None:
    """A regular file's (mtime_ns, size), not noted (None: not a regular file)."""
    return _stamp(path)


def content_digest(path: str, stamp: tuple[int, int]) -> str | None:
    """The digest of a file's bytes while it still has `stamp` (None otherwise, or unreadable):
    kept with a stamp, so that a file touched but not changed (a fresh checkout) still holds."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if _stamp(path) != stamp:
        return None
    return blake2b(data, digest_size=16).hexdigest()


def _names_digest(names: list[str] | None) -> str | None:
    if names is None:
        return None
    return blake2b("\0".join(sorted(names)).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _listing(path: str) -> list[str] | None:
    try:
        return os.listdir(path)
    except (OSError, ValueError):
        return None


def stat(path: str | os.PathLike) -> os.stat_result:
    """os.stat, noted as the file's stamp (raises as os.stat does)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except (OSError, ValueError):
        note("f", p, None)
        raise
    note("f", p, _stamp_of(st))
    return st


def isfile(path: str | os.PathLike) -> bool:
    p = os.fspath(path)
    found = os.path.isfile(p)
    note("e", p, found)
    return found


def isdir(path: str | os.PathLike) -> bool:
    p = os.fspath(path)
    found = os.path.isdir(p)
    note("d", p, found)
    return found


def exists(path: str | os.PathLike) -> bool:
    """A file or a folder is there (noted as both looks)."""
    return isfile(path) or isdir(path)


def listdir(path: str | os.PathLike) -> list[str]:
    """os.listdir, noted (raises as os.listdir does)."""
    p = os.fspath(path)
    names = _listing(p)
    if _noting():
        note("l", p, _names_digest(names))
    if names is None:
        return os.listdir(p)  # raises the error the listing met (or, if it appeared since, lists)
    return names


def glob(folder: str | os.PathLike, pattern: str) -> list[Path]:
    """sorted(Path(folder).glob(pattern)), noted."""
    found = sorted(Path(folder).glob(pattern))
    if _noting():
        note("g", f"{os.fspath(folder)}\0{pattern}", _names_digest([str(f) for f in found]))
    return found


def rglob(folder: str | os.PathLike, pattern: str) -> list[Path]:
    """sorted(Path(folder).rglob(pattern)), noted."""
    found = sorted(Path(folder).rglob(pattern))
    if _noting():
        note("r", f"{os.fspath(folder)}\0{pattern}", _names_digest([str(f) for f in found]))
    return found


def read_text(path: str | os.PathLike, errors: str = "strict") -> str:
    """The file's text (UTF-8), noted by its stamp."""
    p = os.fspath(path)
    if _noting():
        note("f", p, _stamp(p))
    with open(p, encoding="utf-8", errors=errors) as f:
        return f.read()


def read_bytes(path: str | os.PathLike) -> bytes:
    p = os.fspath(path)
    if _noting():
        note("f", p, _stamp(p))
    with open(p, "rb") as f:
        return f.read()


def still_true(kind: str, path: str, seen: object) -> bool:
    """Does the observation hold now?"""
    if kind == "f":
        now: object = _stamp(path)
        if isinstance(seen, (list, tuple)) and len(seen) == 3:  # (mtime, size, content digest)
            if now == tuple(seen[:2]):
                return True
            if now is None or now[1] != seen[1] or seen[2] is None:  # type: ignore[index]
                return False
            return content_digest(path, now) == seen[2]  # type: ignore[arg-type]
        if isinstance(seen, list):  # read back from JSON
            seen = tuple(seen)
    elif kind == "e":
        now = os.path.isfile(path)
    elif kind == "d":
        now = os.path.isdir(path)
    elif kind == "l":
        now = _names_digest(_listing(path))
    elif kind in ("g", "r"):
        folder, _, pattern = path.partition("\0")
        found = Path(folder).glob(pattern) if kind == "g" else Path(folder).rglob(pattern)
        now = _names_digest([str(f) for f in found])
    else:
        raise ValueError(f"not an observation of the file system: {kind}")
    return now == seen

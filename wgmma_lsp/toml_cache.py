"""What wgmma-lsp reads out of a TOML file, kept by the file's content: `tomllib` imported only
for content never read before.

Importing `tomllib` (with the `datetime` and regular expressions it builds) is about 40M
instructions, ~9% of a one-file `wgmma-lsp check`, and every check in a project with a
`pyproject.toml` reads one (config.py; entry/declared.py). What is read from it (the
`[tool.wgmma-lsp]` table) is a function of the file's bytes alone, so it is kept in the user
cache directory (`user_cache.cache_dir()`), keyed by a digest of the bytes, of what is read from
them (`kind`) and of the Python version (its `tomllib`). Nothing else counts: an edited file is
another key. Only a value made of strings, numbers, booleans, lists and tables (or None, for
"absent") is kept (what JSON
gives back exactly); anything else (a TOML date), an invalid file or an extraction that raises is
parsed again on each run, raising as `tomllib` does.

The file: `toml-tables.json`, `{"format": 1, "entries": {digest: value as JSON text}}`, the
newest `MAX_ENTRIES`; written atomically when a run parsed something new (merged with what
another process wrote meanwhile). One that cannot be read or parsed is ignored with a log line
(and replaced).
"""

from __future__ import annotations

import json
import os
import sys

from wgmma_lsp import logs
from wgmma_lsp.digest import blake2b
from wgmma_lsp.user_cache import cache_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable

log = logs.logger()

FORMAT = 1
MAX_ENTRIES = 64

_entries: dict[str, str] | None = None  # the file's entries, read once per process


def cache_path() -> str:
    return os.path.join(str(cache_dir()), "toml-tables.json")


def _key(raw: bytes, kind: str) -> str:
    h = blake2b(digest_size=20)
    h.update(f"{FORMAT}\0{sys.version}\0{kind}\0".encode())
    h.update(raw)
    return h.hexdigest()


def _read() -> dict[str, str]:
    path = cache_path()
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        log.warning("TOML cache %s cannot be read and was ignored (%s: %s)", path,
                    type(e).__name__, e)
        return {}
    entries = data.get("entries") if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(entries, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
        log.warning("TOML cache %s holds something else: ignored", path)
        return {}
    return entries


def _plain(value: Any) -> bool:
    """Made only of what JSON gives back as it was: str, int, float, bool, lists, str-keyed dicts,
    and None (an extraction's "absent": TOML has no null)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def _store(key: str, text: str) -> None:
    path = cache_path()
    merged = {k: v for k, v in _read().items() if k != key}
    merged[key] = text
    if len(merged) > MAX_ENTRIES:
        merged = dict(list(merged.items())[-MAX_ENTRIES:])
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"format": FORMAT, "entries": merged}, f)
        os.replace(tmp, path)
    except OSError as e:  # a cache directory that cannot be written costs only the speed
        log.info("TOML tables not cached in %s: %s", os.path.dirname(path), e)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass  # never created
        except OSError as cleanup:
            log.debug("could not remove %s: %s", tmp, cleanup)


def extract(raw: bytes, kind: str, read: Callable[[dict[str, Any]], Any]) -> Any:
    """`read(tomllib.loads(raw.decode()))`, from the cache when these bytes were read this way
    (`kind` names `read`: one kind, one function) before. Raises what `raw.decode()`,
    `tomllib.loads` and `read` raise. A fresh value each call: callers may keep or change it."""
    global _entries
    if _entries is None:
        _entries = _read()
    key = _key(raw, kind)
    text = _entries.get(key)
    if text is not None:
        return json.loads(text)
    import tomllib

    value = read(tomllib.loads(raw.decode()))
    if _plain(value):
        text = json.dumps(value)
        if json.loads(text) == value:
            _entries[key] = text
            _store(key, text)
    return value


def _tool_table(data: dict[str, Any]) -> Any:
    return data.get("tool", {}).get("wgmma-lsp")


def pyproject_table(raw: bytes) -> Any:
    """The `[tool.wgmma-lsp]` value of a pyproject.toml's bytes (None: absent), as `extract`
    gives it: the configuration (config.py) and the declared entry points (entry/declared.py)
    read the same table, so one parse and one cache entry serve both."""
    return extract(raw, "pyproject:tool.wgmma-lsp", _tool_table)

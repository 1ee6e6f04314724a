"""The on-disk cache of the facts read from an installed JAX (interpret/jax_facts.py).

Reading the facts from JAX's source costs about 0.4 s of CPU, which every `wgmma-lsp check` run
(a pre-commit hook: every commit) paid again. They are kept in the user cache directory:
`$WGMMA_LSP_CACHE_DIR`, else `$XDG_CACHE_HOME/wgmma-lsp`, else `~/.cache/wgmma-lsp`, one file per
(JAX version, `jax` package path, extractor source). An entry holds the mtime and size of every
file the facts were read from; it counts only while all of them are unchanged. Writes are atomic
(a temporary file renamed over the entry); an entry that cannot be read or parsed is ignored with
a log line and rewritten; a cache directory that cannot be written only costs the speed.
"""

from __future__ import annotations

import json
from pathlib import Path

from wgmma_lsp import logs
from wgmma_lsp import observed
from wgmma_lsp import user_cache
from wgmma_lsp.digest import blake2b
from wgmma_lsp.interpret.jax_facts_data import FORMAT, JaxFacts

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

log = logs.logger()

_EXTRACTORS = ("jax_source_read.py", "jax_api_types.py", "jax_facts_data.py", "jax_facts.py",
               "version_text.py", "jax_deprecations.py", "jax_lowering_rules.py", "jax_reduction_scratch.py",
               "ast_walk.py")


def cache_dir() -> Path:
    """The user cache directory (user_cache.py)."""
    return user_cache.cache_dir()


def _extractor_digest() -> str:
    """The source of the code that reads the facts: a changed reader never sees old entries."""
    h = blake2b(digest_size=32)
    here = Path(__file__).parent
    for name in _EXTRACTORS:
        h.update((here / name).read_bytes())
    return h.hexdigest()


def _key(jax_root: Path, version: str | None) -> dict[str, Any]:
    return {"format": FORMAT, "jax_version": version, "jax_root": str(jax_root),
            "extractor": _extractor_digest()}


def entry_path(jax_root: Path, version: str | None) -> Path:
    key = _key(jax_root, version)
    digest = blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=10).hexdigest()
    return cache_dir() / f"jax-facts-{version or 'unknown'}-{digest}.json"


def _stamp(path: Path) -> list[Any] | None:
    try:
        st = observed.stat(path)
    except OSError:
        return None
    return [str(path), st.st_mtime_ns, st.st_size]


def load(jax_root: Path, version: str | None):
    """The cached facts of this JAX, or None (no entry, a stale one, or one that is corrupt)."""
    path = entry_path(jax_root, version)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("JAX facts cache %s cannot be read (%s): reading JAX's source", path, e)
        return None
    try:
        data = json.loads(raw)
        if data["key"] != _key(jax_root, version):
            return None
        for stamp in data["files"]:
            if _stamp(Path(stamp[0])) != stamp:
                return None  # JAX was changed in place (reinstalled, edited): read it again
        return JaxFacts.from_json(data["facts"])
    except (ValueError, KeyError, TypeError, IndexError) as e:
        log.warning("JAX facts cache %s is corrupt and was ignored (%s: %s)", path,
                    type(e).__name__, e)
        return None


def store(jax_root: Path, version: str | None, facts, files: list[Path]) -> Path | None:
    """Write the entry atomically; None when the cache directory cannot be written."""
    path = entry_path(jax_root, version)
    stamps = [s for s in (_stamp(f) for f in files) if s is not None]
    data = {"key": _key(jax_root, version), "files": stamps, "facts": facts.to_json()}
    try:
        user_cache.write_json(path, data, ".jax-facts-")
        return path
    except OSError as e:
        log.info("JAX facts not cached in %s: %s", path.parent, e)
        return None

"""Caches kept within a stated size: plain dicts (they keep insertion order), the oldest entry
dropped first. Callers hold their own lock."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import TypeVar

    K = TypeVar("K")
    V = TypeVar("V")


def trim(cache: dict, limit: int) -> None:
    """Drop the oldest entries beyond `limit`."""
    while len(cache) > limit:
        cache.pop(next(iter(cache)))


def put_newest(cache: dict[K, V], key: K, value: V, limit: int) -> None:
    """Store `value` as the newest entry (an existing key moves to the end), then trim."""
    cache.pop(key, None)
    cache[key] = value
    trim(cache, limit)

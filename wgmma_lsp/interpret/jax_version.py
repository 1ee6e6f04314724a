"""Which JAX the user has, read from package metadata (JAX itself is never imported).

Lowering-time rules depend on it: JAX 0.10 lowers Mosaic GPU kernels with Lane semantics by
default, and later versions switched to Warpgroup semantics, whose checks and messages differ.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata


@functools.lru_cache(maxsize=1)
def installed() -> tuple[int, int, int] | None:
    try:
        text = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def default_lowering_semantics() -> str | None:
    """"lane" where the installed JAX lowers with Lane semantics by default; None if unknown."""
    v = installed()
    if v is not None and (0, 10) <= v[:2] < (0, 11):
        return "lane"
    return None

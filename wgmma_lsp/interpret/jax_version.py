"""Which JAX the user has, read from package metadata and source text (JAX is never imported).

Lowering-time rules depend on it: JAX 0.10 lowers Mosaic GPU kernels with Lane semantics by
default, and later versions switched to Warpgroup semantics, whose checks and messages differ.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import metadata

LANE, WARPGROUP = "lane", "warpgroup"

# `lowering_semantics: mgpu.core.LoweringSemantics = mgpu.core.LoweringSemantics.Lane` in the
# `CompilerParams` dataclass of jax/_src/pallas/mosaic_gpu/core.py.
_DEFAULT_FIELD = re.compile(
    r"^\s*lowering_semantics\s*:\s*[\w.]*LoweringSemantics\s*=\s*[\w.]*LoweringSemantics\.(\w+)",
    re.MULTILINE)


@functools.lru_cache(maxsize=1)
def installed() -> tuple[int, int, int] | None:
    try:
        text = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


#: The project's `lowering-semantics` setting (wgmma_lsp/config.py), for the analysis running in
#: this context: it replaces the installed JAX's default for kernels that do not say.
configured_lowering: ContextVar[str | None] = ContextVar("configured_lowering", default=None)


@contextmanager
def lowering_default(semantics: str | None) -> Iterator[None]:
    """Analyse with `semantics` ("lane", "warpgroup") as the default (None: JAX's own)."""
    token = configured_lowering.set(semantics)
    try:
        yield
    finally:
        configured_lowering.reset(token)


def default_lowering_semantics() -> str | None:
    """The default lowering semantics for kernels that do not say: the project's configuration
    (`lowering-semantics`) if set, else the installed JAX's (None if unknown)."""
    configured = configured_lowering.get()
    if configured is not None:
        return configured
    return installed_default_lowering_semantics()


def _installed_source(relpath: str) -> str | None:
    """The text of a file of the installed jax distribution (read, not imported)."""
    try:
        path = metadata.distribution("jax").locate_file(relpath)
        return path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None


@functools.lru_cache(maxsize=1)
def installed_default_lowering_semantics() -> str | None:
    """The lowering semantics `plgpu.CompilerParams()` gets by default in the installed JAX:
    "lane" or "warpgroup", read from the dataclass field's default; None if unknown."""
    text = _installed_source("jax/_src/pallas/mosaic_gpu/core.py")
    if text is not None:
        m = _DEFAULT_FIELD.search(text)
        if m and m.group(1).lower() in (LANE, WARPGROUP):
            return m.group(1).lower()
    v = installed()
    if v is not None and (0, 10) <= v[:2] < (0, 11):
        return LANE
    if v is not None and v[:2] >= (0, 12):
        return WARPGROUP
    return None

"""Which JAX the user has, read from package metadata and source text (JAX is never imported).

Models and rules say which JAX versions they mirror (`applies`, `matches`); where the API differs
between versions, the analyzer follows the installed one. Supported and tested: 0.10 (Python
3.11) and 0.12 (Python 3.12+); see the README for how a new version is added.

Lowering-time rules depend on the version too: JAX 0.10 lowers Mosaic GPU kernels with Lane
semantics by default, 0.11 and later with Warpgroup semantics, whose checks and messages differ.
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

Version = tuple[int, int, int]


@functools.lru_cache(maxsize=1)
def installed() -> Version | None:
    try:
        text = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    return parse(text)


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


def parse(text: str) -> Version | None:
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


_CLAUSE = re.compile(r"^(<=|>=|==|<|>|)\s*(\d+\.\d+(?:\.\d+)?)$")


def matches(spec: str, version: Version | None = None) -> bool:
    """Whether `version` (default: the installed one) satisfies `spec`: comma-separated clauses,
    all of which must hold — `0.12` (that minor series), `<0.12`, `>=0.11`, `==0.10.2`. An
    unknown version satisfies nothing."""
    v = installed() if version is None else version
    if v is None:
        return False
    for clause in spec.split(","):
        m = _CLAUSE.match(clause.strip())
        if not m:
            raise ValueError(f"bad JAX version clause {clause!r} in {spec!r}")
        op, bound_text = m.groups()
        bound = parse(bound_text)
        assert bound is not None
        exact = bound_text.count(".") == 2
        key = v if exact else v[:2]
        ref = bound if exact else bound[:2]
        ok = {"": key == ref, "==": key == ref, "<": key < ref, "<=": key <= ref,
              ">": key > ref, ">=": key >= ref}[op]
        if not ok:
            return False
    return True

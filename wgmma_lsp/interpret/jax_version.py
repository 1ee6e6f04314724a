"""Which JAX the analysis follows, read from package metadata and source text (never imported).

That is the JAX of the analysed environment (environment.py), or, when it has none, the version
the bundled facts were generated from (interpret/jax_facts.py).

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

from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.interpret.jax_source_read import read_default_lowering  # noqa: F401  (re-exported)
from wgmma_lsp.interpret.version_text import LANE, WARPGROUP, Version, parse  # noqa: F401


@functools.lru_cache(maxsize=1)  # cleared when the analysed JAX changes (jax_facts.on_forget below)
def installed() -> Version | None:
    """The version of the JAX the analysis follows (the bundled facts' without a JAX)."""
    text = jax_facts.current().jax_version
    return parse(text) if text is not None else None


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


def installed_default_lowering_semantics() -> str | None:
    """The lowering semantics `plgpu.CompilerParams()` gets by default in the analysed JAX:
    "lane" or "warpgroup"; None if unknown."""
    return jax_facts.current().default_lowering






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


jax_facts.on_forget(installed.cache_clear)

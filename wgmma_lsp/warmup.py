"""Start-up work done once, off the path of the first keystroke: parso's grammar and the facts
read from the installed JAX's source, then the heap they leave is frozen.

Why freeze: the facts are read from ASTs of JAX's modules, kept for the life of the process
(`interpret/jax_source.py`, about 140,000 objects for the shipped kernels). Left in the collected
heap, every full collection walks them again: about 70 ms per collection on this project's 2-core
machine, landing on a random keystroke. Frozen (`gc.freeze`), they are never walked again.
What is alive when `warm` runs is frozen with them (the server's start-up state); a cycle among
those objects that dies later is not collected, which bounds the cost to what start-up holds.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("wgmma_lsp")


def warm_jax_source() -> int:
    """Read every public `pl.*` / `plgpu.*` name's signature (parses their defining modules once;
    the same lookups the analysis makes lazily). Returns how many names have one."""
    from wgmma_lsp.interpret import jax_source

    found = 0
    version = jax_source._jax_root_and_version()[1]
    for prefix, module in jax_source.PUBLIC_MODULES.items():
        table = jax_source._exports(module, version)
        for name in sorted(table or ()):
            if jax_source.signature(f"{prefix}.{name}") is not None:
                found += 1
    return found


def warm() -> None:
    """parso's grammar, JAX's API facts, then collect and freeze what start-up allocated."""
    from wgmma_lsp import syntax

    syntax.warm()
    try:
        warm_jax_source()
    except Exception:  # pragma: no cover - a JAX we cannot read: the analysis reads lazily
        log.debug("warming the JAX source facts failed", exc_info=True)
    gc.collect()
    gc.freeze()

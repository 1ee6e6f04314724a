"""Start-up work done once, off the path of the first keystroke: parso's grammar and the facts
read from the installed JAX's source, then the heap they leave is frozen.

Why: the facts are read from ASTs of JAX's modules (`interpret/jax_source.py`), read lazily
they stayed in the collected heap for the life of the process (about 140,000 objects for the
shipped kernels), and every full collection walked them again: about 70 ms per collection on this
project's 2-core machine, landing on a random keystroke. Read here, every public name's facts are
cached, the trees are dropped (RSS after analysing every shipped kernel: 74 MB, 82 MB before),
and what start-up leaves is frozen (`gc.freeze`): never walked again.
What is alive when `warm` runs is frozen with them (the server's start-up state); a cycle among
those objects that dies later is not collected, which bounds the cost to what start-up holds.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("wgmma_lsp")


def warm_jax_source() -> int:
    """Load the facts of the analysed JAX (interpret/jax_facts.py: from the on-disk cache, or
    read from every public name's defining module once, the trees then dropped). Returns how
    many public names have a signature."""
    from wgmma_lsp.interpret import jax_facts

    return len(jax_facts.current().signatures)


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

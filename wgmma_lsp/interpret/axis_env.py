"""The named axes JAX's tracing would have bound where the interpreter runs now.

`lax.axis_index("x")` (and `lax.axis_size`, `plgpu.nd_loop(collective_axes=...)`) raise
`NameError` when no enclosing transformation binds "x": JAX keeps an axis environment, extended
by `shard_map` (its mesh's axes), `vmap(axis_name=...)`, and a Mosaic GPU kernel (its
`grid_names`, `cluster_names` and `thread_name`: `core.extend_axis_env_nd(mesh.shape)`).

Here the environment is a set of names when every binding around the running code is known,
and None when it is not: a function analysed with nothing known about its caller (a generic
call) may be called under any `shard_map`, and a transformation this interpreter does not follow
may bind names it cannot see. The analysis of a document starts with the empty set (module code,
its entry points and its tests run outside any transformation); a generic call runs with None.

A leaf module: it imports nothing of the interpreter or the models.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

AXIS_ENV: ContextVar[frozenset[str] | None] = ContextVar("axis_env", default=None)


def current() -> frozenset[str] | None:
    """The names bound here, or None when not all are known."""
    return AXIS_ENV.get()


@contextmanager
def bound(names: frozenset[str] | None) -> Iterator[None]:
    """Run with exactly `names` bound (None: not known)."""
    token = AXIS_ENV.set(names)
    try:
        yield
    finally:
        AXIS_ENV.reset(token)


@contextmanager
def extended(names: Iterable[str] | None) -> Iterator[None]:
    """Run with `names` bound too (None: names not known, so the environment is not either)."""
    now = AXIS_ENV.get()
    with bound(None if now is None or names is None else now | frozenset(names)):
        yield


def unbound_name(names: tuple[str, ...]) -> str | None:
    """The first of `names` (in order, as JAX checks them) that is surely not bound here."""
    env = AXIS_ENV.get()
    if env is None:
        return None
    return next((n for n in names if n not in env), None)

"""`jax.config.<flag>` at JAX's default configuration (interpret/jax_config_flags.py: each flag's
default read from the installed JAX, or the bundled facts), and `jax.config.update`.

`jax.config.jax_default_matmul_precision` is None, `jax.config.jax_enable_x64` False: what a
program run without `JAX_*` environment variables or `--jax_*` flags reads. A flag whose default
JAX computes is unknown, and so is `jax.config.read(name)` (it raises for the flags that have a
context manager: most of them). `jax.config.update("jax_...", value)` returns None; the flag it sets is
unknown for every later read in this process (the analysis does not follow the order the
program's modules set and read flags in, nor which context set one).
"""

from __future__ import annotations


from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Const, Value
from wgmma_lsp.models.registry import API_ATTRIBUTES, model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: Flags some analysed code set with `jax.config.update`: no longer at their defaults.
UPDATED: set[str] = set()


def flag(name: str) -> Value | None:
    """The flag's default as a constant, None when not known."""
    if name in UPDATED:
        return None
    defaults = jax_facts.current().config_defaults or {}
    return Const(defaults[name]) if name in defaults else None


def _config_attribute(interp: Any, name: str, attr: str) -> Value | None:
    return flag(attr) if attr.startswith("jax_") else None


API_ATTRIBUTES["jax.config"] = _config_attribute


@model("jax.config.update")
def _update(call: Call) -> Value:
    name = call.get(0, "name")
    if isinstance(name, Const) and isinstance(name.value, str):
        UPDATED.add(name.value)
        return Const(None)
    UPDATED.update((jax_facts.current().config_defaults or {}).keys())  # (which one: not known)
    return Const(None)

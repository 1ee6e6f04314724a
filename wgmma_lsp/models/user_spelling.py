"""How the user's own code spells what a message or a fix names: the alias a JAX module is
imported under (`plgpu`, `jnp`), and where a ref was allocated (related information)."""

from __future__ import annotations


from wgmma_lsp.interpret.values import ModuleVal, RefVal
from wgmma_lsp.rules.base import Related

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


def module_alias(interp: Any, canonical: str) -> str | None:
    """The name the analysed module binds the JAX module `canonical` ("plgpu", "jnp") to."""
    for name, v in interp.module_env.vars.items():
        if isinstance(v, ModuleVal) and v.name == canonical:
            return name
    return None


def jnp_alias(interp: Any) -> str | None:
    return module_alias(interp, "jnp")


def allocated_here(ref: RefVal) -> list[Related]:
    """Related information at the allocation of `ref`'s root buffer (none when unknown)."""
    root = ref.root()
    if root.origin is None:
        return []
    what = "a WGMMA accumulator" if root.kind == "acc" else f"{root.aval()}"
    return [Related(root.origin, f"allocated here ({root.origin_desc}) as {what}")]

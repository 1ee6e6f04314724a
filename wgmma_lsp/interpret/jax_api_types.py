"""The public API of the installed JAX as read from its source: its exported names (`Export`)
and their parameters (`Signature`, `Param`). Plain data, a leaf: the readers fill it, the facts
keep it, the rules and models read it."""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Param:
    """A parameter of a JAX API function."""
    name: str
    kind: str  # "posonly", "pos" (positional or keyword), "varargs", "kwonly", "varkw"
    required: bool


@dataclass(frozen=True)
class Signature:
    """What Python's argument binding needs to know about a callable."""

    qualname: str  # as CPython's messages spell it: `load`, `Mesh.__init__`
    params: tuple[Param, ...]
    # The callable `**kwargs` is passed on to unconditionally (`Mesh(**mesh_kwargs)` in
    # plgpu.kernel), with the keywords the call adds itself: unknown keywords fail there.
    forwards_to: "Signature | None" = None
    forward_own_keywords: tuple[str, ...] = ()
    binds_self: bool = False  # a class's `__init__`: `self` is its first positional parameter

    def names(self, kind: str) -> list[str]:
        return [p.name for p in self.params if p.kind == kind]

    def has(self, kind: str) -> bool:
        return any(p.kind == kind for p in self.params)


@dataclass(frozen=True)
class Export:
    """A public name: where it is defined, or that it is gone."""

    module: str | None  # defining module, dotted
    name: str | None  # name in that module
    removed_message: str | None = None  # AttributeError text of an accelerated deprecation
    deprecated: bool = False

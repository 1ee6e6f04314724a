"""Where models register: the model modules fill these tables when `load_all` imports them."""

from __future__ import annotations

import importlib

from wgmma_lsp.interpret.values import Value
from wgmma_lsp.submodules import module_names

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any, Callable

MODELS: dict[str, Callable[..., Value]] = {}  # canonical name -> fn(call)
METHODS: dict[str, Callable[..., Value]] = {}  # "array.astype" -> fn(obj, call)
ATTRIBUTES: dict[str, Callable[[Any], Value]] = {}  # "array.shape" -> fn(obj)
# "array.T" -> fn(interp, obj, node): a check of the access itself, where it is written
ATTRIBUTE_SITES: dict[str, Callable[..., None]] = {}
# "array.@" -> fn(interp, left, right, node, result) -> result: a check of an operator, where written
OPERATOR_SITES: dict[str, Callable[..., Value]] = {}
GETITEM: dict[str, Callable[..., Value]] = {}  # "ref" -> fn(interp, obj, index, node)
SETITEM: dict[str, Callable[..., None]] = {}  # "ref" -> fn(interp, obj, index, value, target, value_node, aug)
CONSTANTS: dict[str, Value] = {}  # canonical name -> value (dtypes, memory spaces)
# An API class -> fn(value) answering `isinstance(value, cls)` (None: not known)
INSTANCE_CHECKS: dict[str, Callable[[Value], "bool | None"]] = {}
# a value class's name ("AllocSpec") -> fn(obj, name): whether the object has that attribute (None: not known); for
# `getattr(obj, name, default)`, which gives the default when it has not
HAS_ATTRIBUTE: dict[str, Callable[[Any, str], "bool | None"]] = {}
# canonical name -> fn() giving its value in the analysed environment (`jax.__version_info__`),
# None when not known there
COMPUTED_CONSTANTS: dict[str, Callable[[], "Value | None"]] = {}
# an API object's canonical name ("jax.config"; "lax.DotAlgorithmPreset.*": any of its members) ->
# fn(interp, the object's name, attribute) giving `obj.<attribute>` in the analysed environment
# (None: not known there)
API_ATTRIBUTES: dict[str, Callable[[Any, str, str], "Value | None"]] = {}
# fn(interp, op, left, right, result), told of every comparison of values that are not plain
# constants, after it is made: a model that follows where a value goes (the race analysis'
# `pl.when(lax.axis_index("wg") == 0)`: models/hazard_ops.py)
COMPARE_SITES: list[Callable[..., None]] = []
# a Wrapped value's kind ("wrapped:interpret_mode_forced") -> fn(value) giving the context manager
# the body of a `with value:` block runs in (the state a JAX context manager sets for its block)
WITH_STATES: dict[str, Callable[[Value], "AbstractContextManager[None]"]] = {}


def model(*names: str) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    def deco(fn: Callable[..., Value]) -> Callable[..., Value]:
        for n in names:
            MODELS[n] = fn
        return fn
    return deco


def method(*names: str) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    def deco(fn: Callable[..., Value]) -> Callable[..., Value]:
        for n in names:
            METHODS[n] = fn
        return fn
    return deco


def with_state(*names: str) -> Callable[[Callable[[Value], "AbstractContextManager[None]"]],
                                   Callable[[Value], "AbstractContextManager[None]"]]:
    def deco(fn: Callable[[Value], "AbstractContextManager[None]"]) -> Callable[[Value], "AbstractContextManager[None]"]:
        for n in names:
            WITH_STATES[n] = fn
        return fn
    return deco


def attribute(*names: str) -> Callable[[Callable[[Any], Value]], Callable[[Any], Value]]:
    def deco(fn: Callable[[Any], Value]) -> Callable[[Any], Value]:
        for n in names:
            ATTRIBUTES[n] = fn
        return fn
    return deco


def check_ref_accesses(check: Callable[[Any, Any, Any], None],
                       store: "Callable[[Any, Any, Any, Value], None] | None" = None) -> None:
    """Extend the ref load and store models with `check(interp, ref, node)`, run before each
    load and after each store (for an extension module's `install()`); `store(interp, ref, node,
    value)` instead of `check` for stores, when the check depends on the value stored."""
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp, ref, index, node):
        check(interp, ref, node)
        return get(interp, ref, index, node)

    def setitem(interp, ref, index, value, target, value_node, aug):
        put(interp, ref, index, value, target, value_node, aug)
        if store is not None:
            store(interp, ref, target, value)
        else:
            check(interp, ref, target)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem


def load_all() -> None:
    """Import every model module of this package (each fills the tables above as it is
    imported), found the way rules are (`rules/registry.py`): no hand list here that would import
    this module's own clients. Called by the interpreter's module, not at import: a model module
    imported first then finds this one complete instead of half-initialised."""
    import wgmma_lsp.models as package

    global _installed
    modules = [importlib.import_module(f"{package.__name__}.{name}")
               for name in module_names(package.__path__) if name != "registry"]
    if _installed:
        return
    _installed = True
    # Then the modules that extend other modules' models (checks of their own around a model:
    # races, implicit copies, layouts, unlowerable primitives) install them, in a declared order:
    # no module changes these tables when it is imported.
    extending = [m for m in modules if hasattr(m, "install")]
    for m in sorted(extending, key=lambda m: (m.INSTALL_ORDER, m.__name__)):
        m.install()


_installed = False

"""Hover contexts from a library's autotuning configs: lines no other context reaches.

A library kernel taking a config (tokamax's `gated_linear_unit(..., config: common.Config)`) is
run with the configs its module picks (`entry/config_contexts.py`) and its package's tests
(`entry/test_contexts.py`). Code behind a config field those configs all share stays without a
value: tokamax's GLU picks `wg_dimension=N`, so the `else:` branch of
`if config.wg_dimension == common.MatmulDimension.N:` is never run, and its refs hover nothing.

The module also says every config it may be tuned with: a function whose return annotation is a
collection of the config class (`def get_autotuning_configs(ba) -> set[common.Config]:`). Its
result, from its run with nothing known about its arguments, is a set or list the interpreter
follows as CPython builds it. A few of its configs — chosen to set the fields to values the
other contexts did not take, `wg_dimension=M` first — are run for hovers only (the hover pass,
`interpret/driver.py`): they fill names nothing else gave a value, each value labelled with its
config, and they report nothing. An autotuner tries configs that JAX may reject (a pipeline too
deep for SMEM) and skips those: a finding in one of them is no error of the author's.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from wgmma_lsp import logs
from wgmma_lsp.entry.config_contexts import (
    ConfigContext,
    class_of,
    config_params,
    def_span,
    returned_values,
)
from wgmma_lsp.entry.context import Context, binding_text

if TYPE_CHECKING:
    from wgmma_lsp.interpret.interp import Interpreter
    from wgmma_lsp.interpret.values import ClassVal, FuncVal, Value

log = logs.logger()

MAX_TUNING_CONTEXTS = 4  # autotuning configs one function is run with for hovers, at most
MAX_LABEL_FIELDS = 8  # (the fields it sets to values no other context had)
#: Collection types a provider's return annotation may name (`set[Config]`, `Sequence[Config]`).
COLLECTIONS = frozenset({"set", "frozenset", "list", "tuple", "Set", "FrozenSet", "List", "Tuple",
                         "Sequence", "MutableSequence", "Iterable", "Collection", "AbstractSet",
                         "MutableSet"})


def tuning_contexts(interp: Interpreter, func: FuncVal, already: list[Value]) -> list[ConfigContext]:
    """Up to MAX_TUNING_CONTEXTS autotuning configs of `func`'s config parameters, each setting
    fields to values none of `already` (the configs it ran with) nor an earlier pick had."""
    if func.closure is not interp.module_env:
        return []
    out: list[ConfigContext] = []
    for param, cls in config_params(interp, func):
        seen: dict[str, set[str]] = {}
        for config in already:
            _note(seen, config)
        for provider in collection_providers(interp, cls):
            candidates = _configs_of(interp, provider, cls)
            # Each candidate's field texts, spelled once (GLU SM90's provider returns 1,080).
            texts = [_field_texts(c) for c in candidates] if len(out) < MAX_TUNING_CONTEXTS else []
            while candidates and len(out) < MAX_TUNING_CONTEXTS:
                scores = [len(_new_texts(seen, t)) for t in texts]
                best = max(scores)
                if best == 0:
                    break
                i = scores.index(best)
                pick, pick_texts = candidates.pop(i), texts.pop(i)
                bindings = tuple(_new_texts(seen, pick_texts)[:MAX_LABEL_FIELDS])
                _note(seen, pick)
                ctx = Context(f"{func.name}({param}=one of {provider.name}(...))", provider.node.lineno - 1,
                              bindings, span=def_span(interp, provider.node), open=False)
                out.append(ConfigContext(ctx, param, pick))
    return out


def collection_providers(interp: Interpreter, cls: ClassVal) -> list[FuncVal]:
    """Module-level functions of the document returning a collection of `cls`, in source order."""
    out = []
    for f in interp.defined.values():
        if f.closure is not interp.module_env or isinstance(f.node, ast.Lambda):
            continue
        element = _element_annotation(f.node.returns)
        if element is not None and class_of(interp, element, f) is cls:
            out.append(f)
    out.sort(key=lambda f: f.node.lineno)
    return out


def _element_annotation(returns: ast.expr | None) -> ast.expr | None:
    """`set[C]`, `Sequence[C]`, `tuple[C, ...]` -> `C`."""
    if not isinstance(returns, ast.Subscript):
        return None
    base = returns.value
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
    if name not in COLLECTIONS:
        return None
    element = returns.slice
    if isinstance(element, ast.Tuple):  # `tuple[C, ...]` only
        if len(element.elts) != 2 or not (isinstance(element.elts[1], ast.Constant)
                                          and element.elts[1].value is Ellipsis):
            return None
        element = element.elts[0]
    return element


def _configs_of(interp: Interpreter, provider: FuncVal, cls: ClassVal) -> list[Value]:
    """The instances of `cls` the provider's returned collections hold, in the order the
    interpreter built them (a set's: insertion order, which is not CPython's iteration order —
    here it only decides which configs are tried first). Nothing once the provider's run shows
    its result unknown (entry/provider_result.py: the run stops there)."""
    from wgmma_lsp.entry.provider_result import ResultUnknown, stop_once_result_unknown
    from wgmma_lsp.interpret import mutation
    from wgmma_lsp.interpret.values import InstanceVal, SetVal, TupleVal

    try:
        with stop_once_result_unknown(interp, provider):
            results = returned_values(interp, provider)
    except ResultUnknown as e:
        log.info("hover pass: no autotuning configs: %s", e)
        # (A frame of its traceback holds it, `statement_failed`'s: a cycle that would keep the
        # interpreter its frames hold alive until the collector runs.)
        e.__traceback__ = None
        return []
    out: list[Value] = []
    held: set[int] = set()  # (an instance is `==` only to itself: identity, without a list scan)
    for result in results:
        result = mutation.live(interp, result)
        if isinstance(result, (SetVal, TupleVal)):
            for x in result.items:
                if isinstance(x, InstanceVal) and x.cls is cls and id(x) not in held:
                    held.add(id(x))
                    out.append(x)
    return out


def _field_texts(config: Value) -> list[tuple[str, str]]:
    from wgmma_lsp.interpret.values import Const, InstanceVal

    out = []
    for name, v in getattr(config, "attrs", {}).items():
        if isinstance(v, InstanceVal) and isinstance(v.attrs.get("_name_"), Const):  # an enum member
            out.append((name, f"{v.cls.name}.{v.attrs['_name_'].value}"))  # type: ignore[attr-defined]
            continue
        text = binding_text(v)
        if text is not None:
            out.append((name, text))
    return out


def _new_texts(seen: dict[str, set[str]], texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (field, text) pairs of a config's `_field_texts` that no config seen had."""
    return [(k, t) for k, t in texts if t not in seen.get(k, ())]


def _note(seen: dict[str, set[str]], config: Value) -> None:
    for k, t in _field_texts(config):
        seen.setdefault(k, set()).add(t)

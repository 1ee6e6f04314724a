"""Python's own argument binding, as text: the `TypeError` CPython raises for a call that does
not fit a signature (ceval.c `initialize_locals`, the same on CPython 3.11 and 3.12).

Order of CPython's checks: keywords (unexpected, positional-only passed by name, given twice),
then too many positional arguments, then missing positional, then missing keyword-only ones.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from wgmma_lsp.interpret.jax_source import Signature


@dataclass(frozen=True)
class BindError:
    """Why a call does not bind to a signature."""
    message: str
    kind: str  # "unexpected-keyword", "posonly-as-keyword", "multiple-values", "too-many-positional",
    #            "missing-positional", "missing-keyword-only"
    keyword: str | None = None  # the offending keyword
    names: tuple[str, ...] = ()  # the missing parameters


def _suggestion(sig: Signature, keyword: str) -> str:
    """CPython 3.13+ names the closest parameter: `. Did you mean 'out_type'?` (3.11/3.12 do
    not). Computed by CPython's own `_suggestions` module where this interpreter has it."""
    if sys.version_info < (3, 13):
        return ""
    try:
        import _suggestions  # type: ignore[import-not-found]
    except ImportError:
        return ""
    names = [p.name for p in sig.params if p.kind in ("pos", "kwonly")]
    best = _suggestions._generate_suggestions(names, keyword)
    return f". Did you mean '{best}'?" if best else ""


def _quoted_list(names: list[str]) -> str:
    q = [f"'{n}'" for n in names]
    if len(q) == 1:
        return q[0]
    if len(q) == 2:
        return f"{q[0]} and {q[1]}"
    return ", ".join(q[:-1]) + f", and {q[-1]}"


def bind(sig: Signature, n_positional: int, keywords: list[str]) -> BindError | None:
    """The error binding `n_positional` positional arguments and these keywords raises."""
    if sig.binds_self:  # `Cls(...)` calls `Cls.__init__(self, ...)`: CPython counts self
        n_positional += 1
    params = sig.params
    positional = [p for p in params if p.kind in ("posonly", "pos")]
    posonly = {p.name for p in params if p.kind == "posonly"}
    by_keyword = {p.name for p in params if p.kind in ("pos", "kwonly")}
    has_varargs = sig.has("varargs")
    has_varkw = sig.has("varkw")
    filled = {p.name for p in positional[:n_positional]}
    for kw in keywords:
        if kw not in by_keyword:
            if has_varkw:
                continue
            # CPython names every positional-only parameter passed by name, in parameter order
            as_kw = [p.name for p in positional if p.kind == "posonly" and p.name in keywords]
            if as_kw:
                return BindError(f"{sig.qualname}() got some positional-only arguments passed as "
                                 f"keyword arguments: '{', '.join(as_kw)}'", "posonly-as-keyword",
                                 as_kw[0])
            return BindError(f"{sig.qualname}() got an unexpected keyword argument '{kw}'"
                             f"{_suggestion(sig, kw)}", "unexpected-keyword", kw)
        if kw in filled:
            return BindError(f"{sig.qualname}() got multiple values for argument '{kw}'",
                             "multiple-values", kw)
        filled.add(kw)
    if n_positional > len(positional) and not has_varargs:
        required = sum(1 for p in positional if p.required)
        total = len(positional)
        if required != total:
            takes, plural = f"from {required} to {total}", True
        else:
            takes, plural = str(total), total != 1
        kwonly_given = sum(1 for kw in keywords if kw in {p.name for p in params if p.kind == "kwonly"})
        given = n_positional
        if kwonly_given:
            extra = (f" positional argument{'s' if given != 1 else ''} (and {kwonly_given} "
                     f"keyword-only argument{'s' if kwonly_given != 1 else ''})")
        else:
            extra = ""
        verb = "was" if given == 1 and not kwonly_given else "were"
        return BindError(f"{sig.qualname}() takes {takes} positional argument{'s' if plural else ''} "
                         f"but {given}{extra} {verb} given", "too-many-positional")
    missing = [p.name for p in positional if p.required and p.name not in filled]
    if missing:
        return BindError(f"{sig.qualname}() missing {len(missing)} required positional argument"
                         f"{'s' if len(missing) != 1 else ''}: {_quoted_list(missing)}",
                         "missing-positional", names=tuple(missing))
    missing_kw = [p.name for p in params if p.kind == "kwonly" and p.required and p.name not in filled]
    if missing_kw:
        return BindError(f"{sig.qualname}() missing {len(missing_kw)} required keyword-only argument"
                         f"{'s' if len(missing_kw) != 1 else ''}: {_quoted_list(missing_kw)}",
                         "missing-keyword-only", names=tuple(missing_kw))
    return None


def forwarded_keywords(sig: Signature, n_positional: int, keywords: list[str]) -> list[str]:
    """The keywords a call's `**kwargs` collects (those no named parameter takes)."""
    named = {p.name for p in sig.params if p.kind in ("pos", "kwonly")} - ({"self"} if sig.binds_self else set())
    return [k for k in keywords if k not in named]

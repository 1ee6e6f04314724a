"""`inspect.signature`, `inspect.Signature` and `inspect.BoundArguments`, as CPython's `inspect`
module defines them (Lib/inspect.py: `Signature._bind`, `BoundArguments.args`, `.kwargs`,
`.apply_defaults`).

A library binds its public call's arguments this way (tokamax's `Op.bind`:
`self._fwd_signature.bind(*args, **kwargs)`, `ba.apply_defaults()`, later
`inspect.BoundArguments(sig, arguments).kwargs`), so following it is following the values the
kernel gets. A signature is known only for a user function whose decorators are known to keep
it (its own node's parameters are then CPython's answer); a bind that CPython refuses (a missing
or unexpected argument: TypeError) gives no value.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ApiVal, Const, DictVal, FuncVal, TupleVal, Value, Wrapped
from wgmma_lsp.models.registry import attribute, method, model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

SIGNATURE = "inspect.Signature"
PARAMETER = "inspect.Parameter"
BOUND = "inspect.BoundArguments"

POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = range(5)

#: Decorators (by the name the interpreter resolves them to) that return the function itself or
#: a wrapper whose `__wrapped__` is it: `inspect.signature` of the result is the function's own.
_KEEP_SIGNATURE = frozenset({
    "jaxtyping.jaxtyped", "typing.override", "typing_extensions.override", "typing.final",
    "typing_extensions.final", "abc.abstractmethod", "typing.no_type_check", "functools.cache",
    "functools.lru_cache", "builtins.staticmethod", "builtins.classmethod",
})


# -- values ----------------------------------------------------------------------------------

def _param(name: str, kind: int, default: Value | None) -> Wrapped:
    fields: dict[str, Value] = {"name": Const(name), "kind": Const(kind)}
    if default is not None:
        fields["default"] = default
    return Wrapped(PARAMETER, UNKNOWN, fields)


def _signature(params: tuple[Wrapped, ...]) -> Wrapped:
    return Wrapped(SIGNATURE, UNKNOWN, {"params": TupleVal(params)})


def _params(sig: Value) -> tuple[Wrapped, ...] | None:
    if not (isinstance(sig, Wrapped) and sig.api == SIGNATURE):
        return None
    p = sig.kwargs.get("params")
    return p.items if isinstance(p, TupleVal) else None  # type: ignore[return-value]


def _name(p: Wrapped) -> str:
    return p.kwargs["name"].value  # type: ignore[attr-defined]


def _kind(p: Wrapped) -> int:
    return p.kwargs["kind"].value  # type: ignore[attr-defined]


def _bound(sig: Value, arguments: DictVal) -> Wrapped:
    return Wrapped(BOUND, UNKNOWN, {"signature": sig, "arguments": arguments})


# -- inspect.signature -------------------------------------------------------------------------

def _keeps_signature(interp: Any, func: FuncVal) -> bool:
    node = func.node
    if isinstance(node, ast.Lambda):
        return True
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d  # `@jaxtyped(typechecker=...)`
        if not isinstance(target, (ast.Name, ast.Attribute)):
            return False
        with interp.quiet():
            v = interp.eval(target, func.closure)
        if isinstance(v, ApiVal) and v.name in _KEEP_SIGNATURE:
            continue
        # a decorator made by one of them (`jaxtyped = jaxtyping.jaxtyped(typechecker=...)`)
        if not isinstance(d, ast.Call) and isinstance(v, Wrapped) and v.api == "identity_decorator" \
                and v.kwargs.get("signature_kept") == Const(True):
            continue
        return False
    return True


def signature_of(interp: Any, func: Value) -> Wrapped | None:
    """The signature CPython gives `func`: a user function's parameters (its first dropped when
    it is bound to an object), with their evaluated defaults; None when not known."""
    if not isinstance(func, FuncVal) or not _keeps_signature(interp, func):
        return None
    a = func.node.args
    positional = [(p.arg, POSITIONAL_ONLY) for p in a.posonlyargs] + [(p.arg, POSITIONAL_OR_KEYWORD) for p in a.args]
    if len(func.defaults) > len(positional):
        return None
    first_default = len(positional) - len(func.defaults)
    params = [_param(n, k, func.defaults[i - first_default] if i >= first_default else None)
              for i, (n, k) in enumerate(positional)]
    if a.vararg is not None:
        params.append(_param(a.vararg.arg, VAR_POSITIONAL, None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        default = func.kw_defaults.get(p.arg) if d is not None else None
        if d is not None and default is None:
            return None  # a default that was not evaluated
        params.append(_param(p.arg, KEYWORD_ONLY, default))
    if a.kwarg is not None:
        params.append(_param(a.kwarg.arg, VAR_KEYWORD, None))
    if func.bound_self is not None:
        if not params or _kind(params[0]) not in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            return None  # (CPython: ValueError, invalid method signature)
        params = params[1:]
    return _signature(tuple(params))


@model("inspect.signature")
def _inspect_signature(call: Call) -> Value:
    """`inspect.signature(f)`."""
    if len(call.args) != 1 or call.kwargs or not call.complete:
        return UNKNOWN
    sig = signature_of(call.interp, call.args[0])
    return sig if sig is not None else UNKNOWN


# -- Signature ---------------------------------------------------------------------------------

@attribute(f"wrapped:{SIGNATURE}.parameters")
def _parameters(sig: Value) -> Value:
    """`sig.parameters`: name -> Parameter, in order (a fresh mapping each time: CPython's is a
    read-only view, so nothing written to one is seen by another)."""
    params = _params(sig)
    return DictVal(tuple((_name(p), p) for p in params)) if params is not None else UNKNOWN


@method(f"wrapped:{SIGNATURE}.replace")
def _replace(sig: Value, call: Call) -> Value:
    """`sig.replace(parameters=[...])`: the same signature with those parameters (CPython checks
    their order of kinds and their names: a ValueError gives no value)."""
    if call.args or set(call.kwargs) - {"parameters"} or _params(sig) is None:
        return UNKNOWN
    if "parameters" not in call.kwargs:
        return _signature(_params(sig) or ())
    items = mutation.live(call.interp, call.kwargs["parameters"])
    if not isinstance(items, TupleVal) or getattr(items, "spoiled", False):
        return UNKNOWN
    params = items.items
    if not all(isinstance(p, Wrapped) and p.api == PARAMETER for p in params):
        return UNKNOWN
    kinds = [_kind(p) for p in params]  # type: ignore[arg-type]
    names = [_name(p) for p in params]  # type: ignore[arg-type]
    if kinds != sorted(kinds) or len(set(names)) != len(names) \
            or kinds.count(VAR_POSITIONAL) > 1 or kinds.count(VAR_KEYWORD) > 1:
        return UNKNOWN
    return _signature(params)  # type: ignore[arg-type]


@method(f"wrapped:{SIGNATURE}.bind")
def _bind(sig: Value, call: Call) -> Value:
    """`sig.bind(*args, **kwargs)`: CPython's `Signature._bind` (not partial)."""
    params = _params(sig)
    if params is None or not call.complete:
        return UNKNOWN
    arguments = bind_arguments(params, list(call.args), dict(call.kwargs))
    if arguments is None:
        return UNKNOWN  # TypeError in CPython
    return _bound(sig, DictVal(tuple(arguments)))


def bind_arguments(params: tuple[Wrapped, ...], args: list[Value],
                   kwargs: dict[str, Value]) -> list[tuple[str, Value]] | None:
    """The (name, value) pairs CPython's `Signature._bind` makes, in its order; None where it
    raises a TypeError."""
    out: dict[str, Value] = {}
    rest = list(params)
    leftover: list[Wrapped] = []
    i = 0
    while True:
        if i >= len(args):  # no more positional arguments
            if not rest:
                break
            p = rest.pop(0)
            if _kind(p) == VAR_POSITIONAL:
                break
            if _name(p) in kwargs:
                if _kind(p) == POSITIONAL_ONLY and not any(_kind(q) == VAR_KEYWORD for q in params):
                    return None
                leftover = [p]
                break
            if _kind(p) == VAR_KEYWORD or "default" in p.kwargs:
                leftover = [p]
                break
            return None  # missing a required argument
        if not rest:
            return None  # too many positional arguments
        p = rest.pop(0)
        if _kind(p) in (VAR_KEYWORD, KEYWORD_ONLY):
            return None
        if _kind(p) == VAR_POSITIONAL:
            out[_name(p)] = TupleVal(tuple(args[i:]))
            break
        if _name(p) in kwargs and _kind(p) != POSITIONAL_ONLY:
            return None  # multiple values
        out[_name(p)] = args[i]
        i += 1
    var_keyword: Wrapped | None = None
    for p in leftover + rest:
        if _kind(p) == VAR_KEYWORD:
            var_keyword = p
            continue
        if _kind(p) == VAR_POSITIONAL:
            continue
        if _name(p) not in kwargs:
            if "default" not in p.kwargs:
                return None  # missing a required argument
            continue
        if _kind(p) == POSITIONAL_ONLY:
            return None
        out[_name(p)] = kwargs.pop(_name(p))
    if kwargs:
        if var_keyword is None:
            return None  # an unexpected keyword argument
        out[_name(var_keyword)] = DictVal(tuple(kwargs.items()))
    return list(out.items())


# -- BoundArguments ----------------------------------------------------------------------------

def _parts(ba: Value) -> tuple[tuple[Wrapped, ...], DictVal] | None:
    if not (isinstance(ba, Wrapped) and ba.api == BOUND):
        return None
    params = _params(ba.kwargs.get("signature", UNKNOWN))
    arguments = ba.kwargs.get("arguments")
    if params is None or not isinstance(arguments, DictVal) or arguments.spoiled:
        return None  # (its arguments are made by `bind` or given: never another module's)
    return params, arguments


@model("inspect.BoundArguments")
def _bound_arguments(call: Call) -> Value:
    """`inspect.BoundArguments(signature, arguments)`."""
    sig, arguments = call.get(0, "signature"), call.get(1, "arguments")
    if _params(sig) is None or len(call.args) + len(call.kwargs) != 2:
        return UNKNOWN
    return _bound(sig, arguments) if isinstance(arguments, DictVal) else UNKNOWN


@attribute(f"wrapped:{BOUND}.arguments")
def _arguments(ba: Value) -> Value:
    assert isinstance(ba, Wrapped)
    return ba.kwargs.get("arguments", UNKNOWN)


@attribute(f"wrapped:{BOUND}.signature")
def _bound_signature(ba: Value) -> Value:
    assert isinstance(ba, Wrapped)
    return ba.kwargs.get("signature", UNKNOWN)


@method(f"wrapped:{BOUND}.apply_defaults")
def _apply_defaults(ba: Value, call: Call) -> Value:
    """`ba.apply_defaults()`: `ba.arguments` holds every parameter in order, the missing ones
    with their defaults (`()` / `{}` for `*args` / `**kwargs`). (CPython gives `ba.arguments` a
    new dict; here the one dict changes, as a list does: a reference to it taken before the call
    sees the defaults too.)"""
    parts = _parts(ba)
    if parts is None or call.args or call.kwargs:
        return UNKNOWN
    params, held = parts
    arguments = dict(held.items)
    new: list[tuple[str, Value]] = []
    for p in params:
        name = _name(p)
        if name in arguments:
            new.append((name, arguments[name]))
        elif "default" in p.kwargs:
            new.append((name, p.kwargs["default"]))
        elif _kind(p) == VAR_POSITIONAL:
            new.append((name, TupleVal(())))
        elif _kind(p) == VAR_KEYWORD:
            new.append((name, DictVal(())))
    mutation.write(call.interp, held, tuple(new))
    return Const(None)


def _positional(ba: Value) -> Value:
    """`ba.args`, as CPython computes it from the arguments: the positional parameters' values up
    to the first one not given, `*args` spread."""
    parts = _parts(ba)
    if parts is None:
        return UNKNOWN
    params, held = parts
    arguments = dict(held.items)
    args: list[Value] = []
    for p in params:
        if _kind(p) in (VAR_KEYWORD, KEYWORD_ONLY) or _name(p) not in arguments:
            break
        v = arguments[_name(p)]
        if _kind(p) == VAR_POSITIONAL:
            if not isinstance(v, TupleVal) or v.spoiled:
                return UNKNOWN
            args.extend(v.items)
        else:
            args.append(v)
    return TupleVal(tuple(args))


def _keywords(ba: Value) -> Value:
    """`ba.kwargs`, as CPython computes it: the values of the parameters after the positional
    ones `ba.args` holds (keyword-only ones, and those after a positional one not given),
    `**kwargs` spread."""
    parts = _parts(ba)
    if parts is None:
        return UNKNOWN
    params, held = parts
    arguments = dict(held.items)
    kwargs: dict[str, Value] = {}
    started = False
    for p in params:
        if not started:
            if _kind(p) in (VAR_KEYWORD, KEYWORD_ONLY):
                started = True
            elif _name(p) not in arguments:
                started = True
                continue
        if not started or _name(p) not in arguments:
            continue
        v = arguments[_name(p)]
        if _kind(p) == VAR_KEYWORD:
            if not isinstance(v, DictVal) or v.spoiled:
                return UNKNOWN
            kwargs.update(v.items)
        else:
            kwargs[_name(p)] = v
    return DictVal(tuple(kwargs.items()))


attribute(f"wrapped:{BOUND}.args")(_positional)
attribute(f"wrapped:{BOUND}.kwargs")(_keywords)


# -- Parameter ---------------------------------------------------------------------------------

def _param_field(name: str) -> None:
    attribute(f"wrapped:{PARAMETER}.{name}")(lambda p: p.kwargs[name])  # type: ignore[attr-defined]


for _field in ("name", "kind"):  # `param.name`, `param.kind`
    _param_field(_field)


@attribute(f"wrapped:{PARAMETER}.default")
def _param_default(p: Value) -> Value:
    assert isinstance(p, Wrapped)
    return p.kwargs.get("default", ApiVal("inspect.Parameter.empty"))

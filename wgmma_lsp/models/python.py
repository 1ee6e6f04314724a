"""Python builtins and standard-library helpers kernels use to compute shapes and configs."""

from __future__ import annotations

import ast
import functools
import math

from wgmma_lsp.interpret import (
    classes,  # noqa: E402
    const_fold,  # noqa: E402 - beside the table it serves
    generators,
    mutation,
    operators,
    set_elements,
)
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    UNKNOWN_INT,
    ApiVal,
    ArrayVal,
    ClassVal,
    Const,
    DictVal,
    DTypeVal,
    InstanceVal,
    Opaque,
    OpaqueReplaced,
    PartialVal,
    RefVal,
    SetVal,
    SliceVal,
    SymInt,
    TupleVal,
    Value,
    Wrapped,
    as_dim,
    dim_value,
    is_int_like,
)
from wgmma_lsp.models import containers
from wgmma_lsp.models.registry import CONSTANTS, HAS_ATTRIBUTE, MODELS, model

BUILTINS = {"range", "len", "int", "float", "bool", "min", "max", "tuple", "list", "zip",
            "enumerate", "abs", "sum", "print", "isinstance", "property", "staticmethod",
            "classmethod", "divmod", "reversed", "sorted", "str", "repr", "all", "any", "dict",
            "getattr", "hasattr", "type", "round", "pow", "slice", "map", "super", "object",
            "setattr", "next", "iter", "locals", "set", "frozenset", "bytes", "complex"}
# (next, iter: models/iterators.py; set: models/sets.py; bytes, complex: isinstance and `match` only)


def _consts(values: list[Value]) -> list | None:
    out = []
    for v in values:
        if not isinstance(v, Const):
            return None
        out.append(v.value)
    return out


def _pure(fn):  # a builtin on constants, evaluated for real
    def run(call: Call) -> Value:
        args = _consts(call.args)
        kwargs = _consts(list(call.kwargs.values()))
        if args is None or kwargs is None or not call.complete:
            return UNKNOWN
        try:
            out = fn(*args, **dict(zip(call.kwargs, kwargs)))
        except Exception:
            return UNKNOWN
        if isinstance(out, tuple):  # divmod: a tuple the caller unpacks
            return TupleVal(tuple(Const(x) for x in out))
        return Const(out)
    return run


for _name, _fn in {"abs": abs, "float": float, "divmod": divmod,
                   "round": round, "pow": const_fold.guarded_pow, "str": str, "repr": repr,
                   "math.ceil": math.ceil, "math.floor": math.floor,
                   "math.lcm": math.lcm, "math.log2": math.log2, "math.sqrt": math.sqrt,
                   "math.isqrt": math.isqrt, "math.exp": math.exp, "math.log": math.log}.items():
    # (pl.cdiv: models/shape_ops.py, arrays too)
    key = _name if "." in _name else f"builtins.{_name}"
    model(key)(_pure(_fn))


_float_of_constant = MODELS["builtins.float"]


def _text_of(conversion: str):
    of_constant = MODELS[f"builtins.{conversion}"]

    def run(call: Call) -> Value:
        """`str(obj)` / `repr(obj)`: of constants, evaluated for real; of a shape, a dtype
        object, an object of a user class with `__str__` / `__repr__`: interpret/operators.text."""
        if len(call.args) == 1 and not call.kwargs and isinstance(call.args[0], (InstanceVal, DTypeVal, TupleVal)):
            shown = operators.text(call.interp, mutation.live(call.interp, call.args[0]), conversion)
            return Const(shown) if shown is not None else UNKNOWN
        return of_constant(call)
    return run


model("builtins.str")(_text_of("str"))
model("builtins.repr")(_text_of("repr"))


@model("builtins.float")
def _float(call: Call) -> Value:
    """`float(x)`: of a constant, its value; of a NumPy scalar whose value is known
    (`jnp.finfo(jnp.float32).tiny`, models/dtype_info.py), that value as a Python float."""
    x = call.get(0) if len(call.args) == 1 and not call.kwargs else None
    value = getattr(x, "python_value", None)
    if isinstance(value, float):
        return Const(value)
    return _float_of_constant(call)


@model("math.gcd")
def _gcd(call: Call) -> Value:
    """`math.gcd(*ints)`: computed on constants; 1 whenever one of them is ±1 (whatever the
    others are); an int when they are ints."""
    out = _pure(math.gcd)(call)
    if isinstance(out, Const) or not call.complete or call.kwargs:
        return out
    if any(isinstance(a, Const) and a.value in (1, -1) and not isinstance(a.value, bool)
           for a in call.args):
        return Const(1)
    return UNKNOWN_INT if call.args and all(is_int_like(a) for a in call.args) else UNKNOWN


for _name in ("e", "pi", "inf", "tau", "nan"):
    CONSTANTS[f"math.{_name}"] = Const(getattr(math, _name))
# False when the code runs (only a type checker takes it as true): `if TYPE_CHECKING:` blocks are
# not run, their `else:` is, as in CPython
CONSTANTS["typing.TYPE_CHECKING"] = CONSTANTS["typing_extensions.TYPE_CHECKING"] = Const(False)


@model("builtins.range")
def _range(call: Call) -> Value:
    args = _consts(call.args)
    if args is not None and all(isinstance(a, int) for a in args) and 1 <= len(args) <= 3:
        try:
            return Const(range(*args))
        except Exception:
            return UNKNOWN
    return UNKNOWN


@model("builtins.bool")
def _bool(call: Call) -> Value:
    """`bool(x)` of a constant or a container (tuple, list, dict, set: whether it has items)."""
    if call.kwargs or len(call.args) > 1 or not call.complete:
        return UNKNOWN
    x = mutation.live(call.interp, call.args[0]) if call.args else Const(False)
    truth = call.interp.truth(x) if isinstance(x, (Const, InstanceVal)) or type(x) in (TupleVal, DictVal, SetVal) \
        else None
    return Const(truth) if truth is not None else UNKNOWN


@model("builtins.len")
def _len(call: Call) -> Value:
    v = call.get(0)
    if isinstance(v, (TupleVal, DictVal, SetVal)):
        return Const(len(v.items))
    if isinstance(v, Const) and isinstance(v.value, (str, tuple, list, range)):
        return Const(len(v.value))
    if isinstance(v, (ArrayVal, RefVal)) and v.shape:
        return dim_value(v.shape[0])  # a ref's len is its leading dimension (state.types)
    if isinstance(v, Wrapped) and "len" in v.kwargs:
        return v.kwargs["len"]  # `jax.devices()`: a sequence of known (or symbolic) length
    if isinstance(v, InstanceVal):
        n = operators.length(call.interp, v)  # the class's `__len__`
        if n is not None:
            return Const(n)
    return UNKNOWN_INT  # whatever it is, its length is an int


def _minmax(largest: bool):
    fn = max if largest else min

    def run(call: Call) -> Value:
        """`max`/`min(a, b, ...)`, `max`/`min(iterable, key=..., default=...)`, as CPython
        runs them: the first item whose key is the largest (smallest); of a set, the one
        whose key is strictly so (its order is not known: interpret/set_elements.py)."""
        key, default = call.kwargs.get("key"), call.kwargs.get("default")
        if set(call.kwargs) - {"key", "default"} or not call.complete or not call.args \
                or (default is not None and len(call.args) > 1):
            return UNKNOWN  # (a TypeError, or arguments not known)
        if isinstance(key, Const) and key.value is None:
            key = None
        if len(call.args) == 1:
            seq = mutation.live(call.interp, call.args[0])
            if isinstance(seq, SetVal) and len(seq.items) > 1:
                return set_elements.extreme(call, seq.items, key, largest)
            items = call.interp.iter_items(seq)
            if items is None:
                return UNKNOWN
        else:
            items = list(call.args)
        if not items:
            return default if default is not None else UNKNOWN  # (ValueError without one)
        ks = set_elements.keys(call, items, key)
        if ks is not None:
            try:
                return items[fn(range(len(ks)), key=ks.__getitem__)]
            except TypeError:
                return UNKNOWN
        if all(is_int_like(v) for v in items):
            return UNKNOWN_INT  # one of the ints
        return UNKNOWN
    return run


@model("builtins.int")
def _int(call: Call) -> Value:
    """`int(x)`: a Python int (of an unknown x too; a traced array is JAX's own error)."""
    x = call.get(0, "x", Const(0))
    if isinstance(x, Const) and not call.kwargs and len(call.args) <= 1:
        try:
            return Const(int(x.value))
        except Exception:
            return UNKNOWN
    if isinstance(x, ArrayVal) or isinstance(x, RefVal):
        return UNKNOWN
    if isinstance(x, SymInt):
        return x
    return UNKNOWN_INT


model("builtins.min")(_minmax(largest=False))
model("builtins.max")(_minmax(largest=True))


@model("builtins.sum")
def _sum(call: Call) -> Value:
    v = call.get(0)
    if isinstance(v, TupleVal):
        total: D.Dim = 0
        for item in v.items:
            total = D.add(total, as_dim(item))
        return dim_value(total)
    return UNKNOWN


@model("math.prod")
def _prod(call: Call) -> Value:
    v = call.get(0)
    if isinstance(v, TupleVal):
        total: D.Dim = 1
        for item in v.items:
            total = D.mul(total, as_dim(item))
        return dim_value(total)
    return UNKNOWN


@model("builtins.tuple")
def _tuple(call: Call) -> Value:
    v = call.get(0) if call.args else TupleVal(())
    if isinstance(v, TupleVal) and not v.is_list:
        return v
    items = containers.seq_items(call.interp, v)
    return TupleVal(items) if items is not None and not call.kwargs else UNKNOWN


@model("builtins.list")
def _list(call: Call) -> Value:
    """`list(xs)`: a new list (changing it leaves `xs` alone)."""
    items = containers.seq_items(call.interp, call.get(0)) if call.args else ()
    return TupleVal(items, True) if items is not None and not call.kwargs else UNKNOWN


@model("builtins.sorted")
def _sorted(call: Call) -> Value:
    given = mutation.live(call.interp, call.get(0)) if len(call.args) == 1 else None
    items = given.items if isinstance(given, SetVal) and "key" not in call.kwargs \
        else containers.seq_items(call.interp, given) if given is not None else None  # (distinct: no ties)
    out = containers.sorted_items(items, call) if items is not None else None
    return TupleVal(out, True) if out is not None else call.interp.unknown_call(call)


@model("builtins.zip")
def _zip(call: Call) -> Value:
    """`zip(*iterables, strict=...)` of iterables known item by item (not iterators: `zip` would
    leave the rest of one to whoever holds it): the tuples, up to the shortest."""
    strict = call.kwargs.get("strict", Const(False))
    if set(call.kwargs) - {"strict"} or not isinstance(strict, Const) or not call.complete or not call.args:
        return UNKNOWN
    seqs = [containers.sequence_items(call.interp, a) for a in call.args]
    if any(s is None for s in seqs):
        generators.given_away(call.interp, call.args)  # zip may take from them at any time
        return UNKNOWN
    n = min(len(s) for s in seqs)  # type: ignore[arg-type]
    if strict.value and any(len(s) != n for s in seqs):  # type: ignore[arg-type]
        return UNKNOWN  # (ValueError)
    return TupleVal(tuple(TupleVal(tuple(s[i] for s in seqs)) for i in range(n)))  # type: ignore[index]


@model("builtins.map")
def _map(call: Call) -> Value:
    """`map(f, xs, ...)` over known sequences: f applied to each (eagerly, as a tuple)."""
    f, seqs = call.get(0), call.args[1:]
    if not seqs or not all(isinstance(s, TupleVal) for s in seqs) or not call.complete:
        return call.interp.unknown_call(call)
    n = min(len(s.items) for s in seqs)  # type: ignore[union-attr]
    if n > 64:
        return call.interp.unknown_call(call)
    interp = call.interp
    return TupleVal(tuple(interp.call_value(f, Call(interp, call.node, [s.items[i] for s in seqs], {},  # type: ignore[union-attr]
                                                    [None] * len(seqs), {}, call.env))
                          for i in range(n)))


@model("builtins.enumerate")
def _enumerate(call: Call) -> Value:
    """`enumerate(iterable, start=0)` of an iterable known item by item (not an iterator)."""
    start = call.get(1, "start", Const(0))
    if len(call.args) + len(call.kwargs) > 2 or set(call.kwargs) - {"start"} or not call.complete \
            or not (isinstance(start, Const) and type(start.value) is int):
        generators.given_away(call.interp, call.args)
        return UNKNOWN
    items = containers.sequence_items(call.interp, call.get(0)) if call.args else None
    if items is None:
        generators.given_away(call.interp, call.args)
        return UNKNOWN
    return TupleVal(tuple(TupleVal((Const(i), x)) for i, x in enumerate(items, start.value)))


@model("builtins.reversed")
def _reversed(call: Call) -> Value:
    """`reversed(seq)` of a sequence (a tuple, list, string, range, or a dict's keys)."""
    v = mutation.live(call.interp, call.get(0))
    if isinstance(v, (TupleVal, DictVal)) or isinstance(v, Const) and isinstance(v.value, (str, tuple, range)):
        items = containers.sequence_items(call.interp, v)
        if items is not None:
            return TupleVal(tuple(reversed(items)))
    return UNKNOWN


@model("builtins.print", "builtins.hasattr")
def _opaque(call: Call) -> Value:
    return call.interp.unknown_call(call)


_BUILTIN_TYPE_NAMES = {int: "int", float: "float", str: "str", bool: "bool", type(None): "NoneType"}


@model("builtins.type")
def _type(call: Call) -> Value:
    """`type(x)` with one argument: an instance's class, a Python constant's builtin type, a
    tuple's or list's; anything else (and the three-argument form) not followed."""
    if len(call.args) != 1 or call.kwargs:
        return call.interp.unknown_call(call)
    v = call.args[0]
    if isinstance(v, InstanceVal):
        return v.cls
    if isinstance(v, Const) and type(v.value) in _BUILTIN_TYPE_NAMES and v.value is not None:
        return ApiVal(f"builtins.{_BUILTIN_TYPE_NAMES[type(v.value)]}")
    if type(v) is TupleVal:
        return ApiVal("builtins.list" if v.is_list else "builtins.tuple")
    if type(v) is DictVal:
        return ApiVal("builtins.dict")
    return call.interp.unknown_call(call)


@model("builtins.locals")
def _locals(call: Call) -> Value:
    """`locals()` in a function defined at module level or in a class there: a new dict of
    its parameters and the names bound so far, in the order they were bound. Elsewhere (module
    or class scope, a nested function, whose free variables CPython adds, or one using `super`,
    whose `__class__` it adds) not followed."""
    env, interp = call.env, call.interp
    frame = interp.stack[-1] if interp.stack else None
    if call.args or call.kwargs or env is None or frame is None or frame.func is None or env.class_scope:
        return UNKNOWN
    parent = env.parent
    if parent is not None and parent.class_scope:
        parent = parent.parent
    if parent is None or parent.parent is not None:
        return UNKNOWN
    if _names_super(frame.func.node):
        return UNKNOWN
    return DictVal(tuple(env.vars.items()))


@functools.lru_cache(maxsize=256)
def _names_super(node: ast.AST) -> bool:
    """Whether the function's code names `super` (kept per node: `locals()` runs in loops)."""
    return any(isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(node))


def _truths(call: Call) -> list[bool | None] | None:
    """The truth of each item of `any`/`all`'s one argument, a known sequence (a generator
    expression the interpreter ran, a list, a tuple); None when it is not one."""
    if len(call.args) != 1 or call.kwargs or isinstance(call.args[0], generators.GeneratorVal):
        return None  # (a generator function's body would run past where `any` stops it)
    items = containers.seq_items(call.interp, call.args[0])
    if items is None:
        return None
    return [call.interp.truth(mutation.live(call.interp, v)) for v in items]


def _short_circuit(call: Call, stop: bool) -> Value:
    """`any` (stop at a true item) or `all` (stop at a false one) of a known sequence: decided
    by the items whose truth is known, whatever the unknown ones are."""
    truths = _truths(call)
    if truths is None:
        return call.interp.unknown_call(call)
    if stop in truths:
        return Const(stop)
    return Const(not stop) if all(t is (not stop) for t in truths) else UNKNOWN


@model("builtins.any")
def _any(call: Call) -> Value:
    return _short_circuit(call, True)


@model("builtins.all")
def _all(call: Call) -> Value:
    return _short_circuit(call, False)


@model("builtins.dict", "collections.OrderedDict", "immutabledict.immutabledict")
def _dict(call: Call) -> Value:
    """`dict(a=x, b=y)`, `dict(mapping, **kw)`: a new dict of the mapping's items, then the
    keywords. `collections.OrderedDict(...)` and `immutabledict.immutabledict(...)` (a dict that
    cannot change) hold the same items in the same order. A mapping not known item by item, or
    pairs, are not followed."""
    if len(call.args) > 1 or not call.complete:
        return call.interp.unknown_call(call)
    items: dict = {}
    if call.args:
        given = mutation.live(call.interp, call.args[0])
        if isinstance(given, DictVal):
            items.update(given.items)
        else:  # an iterable of key-value pairs (`dict(zip(names, values))`)
            pairs = _pairs(call.interp, given)
            if pairs is None:
                return call.interp.unknown_call(call)
            items.update(pairs)
    items.update(call.kwargs)
    return DictVal(tuple(items.items()))


def _pairs(interp, given: Value) -> list[tuple[object, Value]] | None:
    """The (hashable constant key, value) pairs an iterable of two-item sequences gives."""
    seq = containers.sequence_items(interp, given) if not isinstance(given, InstanceVal) else None
    if seq is None:
        return None
    out = []
    for pair in seq:
        kv = containers.sequence_items(interp, pair) if isinstance(pair, TupleVal) else None
        if kv is None or len(kv) != 2 or not isinstance(kv[0], Const):
            return None
        try:
            hash(kv[0].value)
        except TypeError:
            return None
        out.append((kv[0].value, kv[1]))
    return out


@model("builtins.getattr")
def _getattr(call: Call) -> Value:
    obj, name = call.get(0), call.get(1)
    if isinstance(name, Const) and isinstance(name.value, str):
        if call.has(2) and (has := HAS_ATTRIBUTE.get(type(obj).__name__)) is not None \
                and has(obj, name.value) is False:
            return call.get(2)  # (the object has no such attribute: the default)
        v = call.interp.getattr(obj, name.value)
        if v is UNKNOWN and call.has(2):
            return UNKNOWN
        return v
    return UNKNOWN


@model("builtins.slice")
def _slice(call: Call) -> Value:
    """`slice(stop)`, `slice(start, stop[, step])`: the same value as `start:stop:step`."""
    if not call.complete or call.kwargs or not 1 <= len(call.args) <= 3:
        return UNKNOWN
    if len(call.args) == 1:
        return SliceVal(Const(None), call.args[0], Const(None))
    start, stop = call.args[0], call.args[1]
    return SliceVal(start, stop, call.args[2] if len(call.args) == 3 else Const(None))


@model("builtins.property", "builtins.staticmethod", "builtins.classmethod")
def _identity_decorator(call: Call) -> Value:
    return call.get(0)


@model("functools.partial")
def _partial(call: Call) -> Value:
    if not call.args or not call.complete:
        return UNKNOWN
    func = call.args[0]
    return PartialVal(func, tuple(call.args[1:]), dict(call.kwargs),
                      tuple(call.span_of(i) for i in range(1, len(call.args))))


@model("functools.wraps", "functools.cache", "functools.lru_cache")
def _wraps(call: Call) -> Value:
    return Wrapped("identity_decorator", UNKNOWN, {})


@model("jaxtyping.jaxtyped")
def _jaxtyped(call: Call) -> Value:
    """`@jaxtyping.jaxtyped(typechecker=...)` / `jaxtyped(fn, typechecker=...)`: the function,
    its arguments checked against its annotations (a call they fail raises: not a value)."""
    if call.args:
        return call.args[0]
    # (the wrapper it makes has the function as `__wrapped__`: its signature is the function's)
    return Wrapped("identity_decorator", UNKNOWN, {"signature_kept": Const(True)})


@model("typing.final", "typing.override", "typing_extensions.final", "typing_extensions.override",
       "typing.runtime_checkable", "typing_extensions.runtime_checkable", "abc.abstractmethod",
       "functools.total_ordering")
def _returns_its_argument(call: Call) -> Value:
    """Decorators that return the function or class they are given (they only mark it)."""
    return call.get(0) if len(call.args) == 1 and not call.kwargs and call.complete else UNKNOWN


_PYTREE_KINDS = {"jax.tree_util.register_dataclass": "dataclass",
                 "jax.tree_util.register_pytree_node_class": "node_class",
                 "jax.tree_util.register_static": "static"}


def _field_names(v: Value | None) -> tuple[str, ...] | None:
    items = v.items if isinstance(v, TupleVal) and not v.spoiled else None
    if items is None or not all(isinstance(i, Const) and isinstance(i.value, str) for i in items):
        return None
    return tuple(i.value for i in items)


def _register(kind: str, cls: Value, kwargs: dict[str, Value]) -> Value:
    """Mark a user class as the pytree node JAX's registry makes it (models/pytrees.py flattens
    it); a registration not followed (fields not known, fields dropped) leaves it unmarked, and
    its instances unknown to `jax.tree.flatten`."""
    if not isinstance(cls, ClassVal):
        return cls
    data = meta = None
    if kind == "dataclass":
        if "drop_fields" in kwargs:
            return cls
        if "data_fields" in kwargs or "meta_fields" in kwargs:
            data, meta = _field_names(kwargs.get("data_fields")), _field_names(kwargs.get("meta_fields"))
            if data is None or meta is None:
                return cls
        elif not cls.is_dataclass:
            return cls  # JAX raises a TypeError
    cls.pytree, cls.pytree_data, cls.pytree_meta = kind, data, meta
    return cls


def _registration(kind: str):
    def register(call: Call) -> Value:
        """`@jax.tree_util.register_dataclass` / `register_dataclass(cls, data_fields,
        meta_fields)`, `@register_pytree_node_class`, `@register_static`: the class, registered;
        with only keywords, a decorator that returns it."""
        kwargs = dict(call.kwargs)
        if len(call.args) > 1:
            kwargs["data_fields"] = call.args[1]
        if len(call.args) > 2:
            kwargs["meta_fields"] = call.args[2]
        if call.args:
            return _register(kind, call.args[0], kwargs) if call.complete else call.args[0]
        return Wrapped("identity_decorator", UNKNOWN, {})
    return register


for _name, _kind in _PYTREE_KINDS.items():
    model(_name)(_registration(_kind))


@model("identity_decorator()")
def _identity_apply(call: Call) -> Value:
    return call.get(0)


@model("dataclasses.dataclass", "pydantic.dataclasses.dataclass", "flax.struct.dataclass")
def _dataclass(call: Call) -> Value:
    """`@dataclass` and `@dataclass(frozen=True, ...)`: the class itself (the class statement
    recognises the decorator, by this name, to make its fields)."""
    if call.args:
        return call.args[0]
    return Wrapped("dataclasses.dataclass", UNKNOWN, dict(call.kwargs))


@model("dataclasses.dataclass()")
def _dataclass_apply(call: Call) -> Value:
    return call.get(0)


@model("dataclasses.field")
def _field(call: Call) -> Value:
    return Wrapped("dataclasses.field", UNKNOWN, dict(call.kwargs))


@model("dataclasses.replace")
def _replace(call: Call) -> Value:
    obj = call.get(0)
    if isinstance(obj, InstanceVal):  # made anew by the class's __init__ (interpret/classes.py)
        return classes.replace(call.interp, obj, call)
    if isinstance(obj, Opaque) and call.complete and len(call.args) == 1:
        # An unknown config with some fields replaced (dataclasses.replace keeps the others).
        kept = dict(getattr(obj, "overrides", ()))
        kept.update(call.kwargs)
        return OpaqueReplaced(obj.name, tuple(kept.items()))
    if isinstance(obj, Wrapped) and obj.api in REPLACEABLE and "?" not in obj.kwargs and call.complete \
            and len(call.args) == 1:
        # A JAX dataclass the model made from its keywords (`plgpu.CompilerParams(...)`): made
        # anew by its __init__ from the fields given, those replaced (JAX's tests' `self.kernel`
        # helper sets the class's `lowering_semantics` so). Its defaults stay defaults.
        kwargs = {**obj.kwargs, **call.kwargs}
        return MODELS[obj.api](Call(call.interp, call.node, [], kwargs, [], {}, call.env))
    return UNKNOWN


#: JAX classes whose models keep the keywords they were made with (all of them, or "?"):
#: `dataclasses.replace` makes them anew from those.
REPLACEABLE = frozenset({"plgpu.CompilerParams"})

"""`isinstance(v, cls)` where CPython's answer follows from what the interpreter knows of `v`
and `cls`: the program's classes (their MRO), Python's builtin types, JAX's types and enums,
the classes of the JAX API the models know the objects of (models/registry.INSTANCE_CHECKS),
and third-party classes whose source proves them plain (interpret/foreign_classes.py)."""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import jax_value_equality
from wgmma_lsp.interpret.classes import NamedTupleVal, mro, opaque_bases
from wgmma_lsp.interpret.values import (
    ApiVal,
    ArrayVal,
    ClassVal,
    Const,
    DictVal,
    ForeignName,
    FuncVal,
    InstanceVal,
    RefVal,
    SetVal,
    ShapeDtypeVal,
    TupleVal,
    Value,
)
from wgmma_lsp.models.registry import INSTANCE_CHECKS

_BUILTIN_TYPES = {"builtins.int": int, "builtins.float": float, "builtins.str": str,
                  "builtins.bool": bool, "builtins.tuple": tuple, "builtins.list": list,
                  "builtins.dict": dict, "builtins.object": object, "builtins.bytes": bytes,
                  "builtins.complex": complex, "builtins.set": set, "builtins.frozenset": frozenset}


# JAX's types an abstract value can be tested against: a ShapeDtypeStruct is exactly one of them.
_API_TYPES = frozenset({"jax.ShapeDtypeStruct", "jax.Array", "jnp.ndarray", "np.ndarray"})


def isinstance_of(v: Value, of: Value) -> bool | None:
    """`isinstance(v, of)` when the interpreter knows the answer, else None."""
    if isinstance(of, TupleVal):
        answers = [isinstance_of(v, c) for c in of.items]
        if True in answers:
            return True
        return False if all(a is False for a in answers) else None
    if isinstance(of, ForeignName):
        return _foreign_instance(v, of)
    if isinstance(of, ApiVal) and (check := INSTANCE_CHECKS.get(of.name)) is not None:
        return check(v)  # a class of the JAX API the models know the objects of
    if isinstance(of, ApiVal) and (member := jax_value_equality.member(v)) is not None:
        return _member_instance(member[0], of.name)
    if isinstance(of, ApiVal) and isinstance(v, (Const, TupleVal, DictVal)) and not isinstance(v, NamedTupleVal) \
            and _jax_class_outside_builtins(of.name):
        return False  # a Python constant, tuple, list or dict has a builtin type: no JAX class's
    if isinstance(of, ApiVal) and of.name in _BUILTIN_TYPES:
        t = _BUILTIN_TYPES[of.name]
        if (own := _python_type(v)) is not None:
            return issubclass(own, t)
        if isinstance(v, InstanceVal) and not opaque_bases(v.cls) and v.cls.kind == "" \
                and t is not object:
            return False
        if isinstance(v, (ArrayVal, RefVal)) and t is not object:
            return False  # a jax.Array (a tracer) or a ref is none of Python's builtin types
        return None
    if isinstance(of, ApiVal) and isinstance(v, ShapeDtypeVal) and of.name in _API_TYPES:
        return of.name == "jax.ShapeDtypeStruct"  # a ShapeDtypeStruct is no array, nor a ref
    if isinstance(of, ApiVal) and of.name in _API_TYPES and (isinstance(v, (Const, DictVal)) or (
            isinstance(v, TupleVal) and not isinstance(v, NamedTupleVal))):
        return False  # a Python number, string, None, tuple, list or dict is no array
    if isinstance(of, ApiVal) and isinstance(v, ArrayVal) and v.jax and of.name in _API_TYPES:
        return of.name in ("jax.Array", "jnp.ndarray")  # made by JAX: a jax.Array, no NumPy array
    if isinstance(of, ClassVal) and isinstance(v, (ArrayVal, RefVal, ShapeDtypeVal)) \
            and not opaque_bases(of) and not of.kind:
        return False  # nor an instance of a class of the user's
    if isinstance(of, ClassVal) and isinstance(v, (ArrayVal, RefVal, ShapeDtypeVal, Const, DictVal)) \
            and _plain_metaclass(of):
        return False  # a JAX or builtin object is no instance of a class derived from a plain one
    if isinstance(of, ClassVal) and isinstance(v, (InstanceVal, NamedTupleVal)):
        cls = v.cls
        if of in mro(cls):
            return True
        return None if opaque_bases(cls) or opaque_bases(of) else False
    if isinstance(of, ClassVal) and isinstance(v, (Const, TupleVal, DictVal)) \
            and not isinstance(v, NamedTupleVal) and not opaque_bases(of) and not of.kind:
        return False
    return None


#: Where a canonical API prefix lives (`lax.DotAlgorithm` is `jax.lax.DotAlgorithm`).
_PUBLIC_MODULES = {"lax": "jax.lax", "jnp": "jax.numpy", "jax": "jax", "np": "numpy"}


def _member_instance(enum: str, of: str) -> bool | None:
    """`isinstance(E.MEMBER, of)` for a JAX enum `E` (interpret/jax_value_equality.py): a
    member's type is `E`, whose bases are `enum.Enum` and `object`; a builtin type, a JAX type
    or an enum is no base of it unless it is one of those — for another JAX class, when its
    source proves it plain (foreign_classes)."""
    from wgmma_lsp.interpret import foreign_classes

    if of in (enum, "enum.Enum", "builtins.object"):
        return True
    if of in _BUILTIN_TYPES or of in _API_TYPES or of in jax_value_equality.IDENTITY_ENUMS:
        return False
    head, _, rest = of.partition(".")
    public = _PUBLIC_MODULES.get(head)
    if public is not None and rest and foreign_classes.is_plain_class(f"{public}.{rest}"):
        return False
    return None


def _jax_class_outside_builtins(of: str) -> bool:
    """Whether a JAX API class is neither a builtin type nor a base of one, nor decides
    `isinstance` itself: an enum of IDENTITY_ENUMS, or a class whose source proves it plain
    (`lax.DotAlgorithm`, a NamedTuple: a plain tuple is no instance of it)."""
    from wgmma_lsp.interpret import foreign_classes

    if of in jax_value_equality.IDENTITY_ENUMS:
        return True
    if of in _BUILTIN_TYPES or of in _API_TYPES:
        return False
    head, _, rest = of.partition(".")
    public = _PUBLIC_MODULES.get(head)
    return public is not None and bool(rest) and foreign_classes.is_plain_class(f"{public}.{rest}")


def _plain_metaclass(cls: ClassVal) -> bool:
    """Whether `cls`'s metaclass is proven `type` — no `metaclass=`, each base outside the
    program a class whose source proves it (`class BatchedShapeDtype(jax.ShapeDtypeStruct)`:
    interpret/foreign_classes.py) — so `isinstance` of an object of a type defined before it
    (JAX's, Python's) is False."""
    from wgmma_lsp.interpret import foreign_classes

    for c in mro(cls):
        node = c.node
        if not isinstance(node, ast.ClassDef) or any(k.arg in ("metaclass", None) for k in node.keywords):
            return False
        for b in c.bases:
            if isinstance(b, ClassVal):
                continue
            name = b.name if isinstance(b, (ApiVal, ForeignName)) else None
            if name in ("builtins.object", "typing.Generic"):
                continue
            if name is None or not foreign_classes.is_plain_class(name):
                return False
    return True


#: The container ABCs of `collections.abc` (and their `typing` aliases) whose answer for a
#: Python value of a known type CPython gives (`_abc_instance`).
_ABCS = {f"{m}.{n}": n for m in ("collections.abc", "typing")
         for n in ("Sequence", "MutableSequence", "Mapping", "MutableMapping", "Set", "MutableSet")}


def _python_type(v: Value) -> type | None:
    """The builtin type of a Python value the interpreter knows (None: not one)."""
    if isinstance(v, NamedTupleVal):
        return None
    if isinstance(v, Const) and v.value is not Ellipsis:
        return type(v.value)
    if isinstance(v, TupleVal):
        return list if v.is_list else tuple
    if isinstance(v, DictVal):
        return dict
    if isinstance(v, SetVal):
        return frozenset if v.frozen else set
    return None


def _abc_instance(v: Value, abc_name: str) -> bool | None:
    """`isinstance(v, collections.abc.Sequence)` (or `Mapping`, `Set`, their mutable forms): of a
    Python value, CPython's own answer for its type; of an array (JAX's or NumPy's), False — they
    are registered with none of these — as of a ref; None for anything else (a user class may
    register itself or derive from one)."""
    import collections.abc

    t = _python_type(v)
    if t is not None:
        return issubclass(t, getattr(collections.abc, abc_name))
    if isinstance(v, (ArrayVal, RefVal, ShapeDtypeVal)):
        return False
    return None


def _foreign_instance(v: Value, of: ForeignName) -> bool | None:
    """`isinstance(v, qwix.QArray)`, a class of a package the program does not read: False for
    the objects whose type the interpreter knows — JAX's, NumPy's, Python's own, a user class
    with known bases: none derives from it — when the class's source proves it plain
    (interpret/foreign_classes.py); True for an instance of a user class derived from it. The
    container ABCs of `collections.abc`: `_abc_instance`."""
    from wgmma_lsp.interpret import foreign_classes

    if of.name in _ABCS and not isinstance(v, (InstanceVal, ClassVal)):
        return _abc_instance(v, _ABCS[of.name])
    if isinstance(v, InstanceVal):
        if any(isinstance(b, ForeignName) and b.name == of.name for c in mro(v.cls) for b in c.bases):
            return True
        if opaque_bases(v.cls):
            return None
    elif not isinstance(v, (Const, TupleVal, DictVal, ArrayVal, RefVal, ShapeDtypeVal, FuncVal, ClassVal)):
        return None
    if isinstance(v, ClassVal) and opaque_bases(v):
        return None  # its metaclass may come from a base nothing is known of
    return False if foreign_classes.is_plain_class(of.name) else None

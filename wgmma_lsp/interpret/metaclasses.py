"""A class statement's metaclass of the user's, run as CPython runs it.

`class C(B, metaclass=M, flag=x): ...` makes C as `M(name, bases, namespace, flag=x)` does:
`M.__new__(M, name, bases, namespace, flag=x)`, then `M.__init__(C, name, bases, namespace,
flag=x)` when `__new__` returned an instance of M. A class without `metaclass=` has its bases'
(the most derived of them). JAX's own tests are written so:

    class PallasTestMetaclass(parameterized.TestGeneratorMetaclass):
      def __new__(mcs, *args, lowering_semantics=plgpu.LoweringSemantics.Lane):
        cls = super().__new__(mcs, *args)
        cls.LOWERING_SEMANTICS = lowering_semantics
        return cls

    class PallasTest(jtu.JaxTestCase, metaclass=PallasTestMetaclass): ...
    class PallasCallWGTest(PallasCallTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup): ...

Here the user's `__new__` and `__init__` run as written. The class object itself is made by
`type.__new__` (reached through `super().__new__(mcs, name, bases, namespace)` from a metaclass
whose bases the interpreter does not know, as absl's `TestGeneratorMetaclass`, or `type`): that
call, given the very name, bases and namespace of the statement, is the class the statement's
body made (`classes.TYPE_NEW`, as the interpreter makes classes without metaclasses); given
anything else, or keywords, it is unknown. What `__new__` returns is what the name is bound to:
an unknown value (a metaclass this module cannot follow) makes the class unknown, so nothing is
claimed of an attribute the metaclass may have set — never the base class's value.

A metaclass the interpreter does not know (an API class, `abc.ABCMeta`, an unknown value), or
bases whose metaclasses conflict (CPython raises a TypeError), leave the class as its body makes
it, as before.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.classes import bind, mro
from wgmma_lsp.interpret.values import UNKNOWN, ClassVal, Const, DictVal, FuncVal, TupleVal, Value

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    Interpreter = Any  # interp.Interpreter (it imports this module)


def metaclass_of(bases: tuple[Value, ...], explicit: Value | None) -> ClassVal | None:
    """The user's metaclass a class statement calls: `metaclass=` (a class of the user's) or its
    bases', the most derived of them (CPython's `_calculate_meta`); None when it is `type`, a
    metaclass the interpreter does not know, or when they conflict."""
    candidates: list[ClassVal] = []
    if explicit is not None:
        if not isinstance(explicit, ClassVal):
            return None
        candidates.append(explicit)
    candidates += [b.meta for b in bases if isinstance(b, ClassVal) and isinstance(b.meta, ClassVal)]
    winner: ClassVal | None = None
    for m in candidates:
        if winner is None or m in mro(winner):
            winner = winner or m
        elif winner in mro(m):
            winner = m
        else:
            return None  # (CPython: "metaclass conflict")
    return winner


def _user_method(meta: ClassVal, name: str) -> FuncVal | None | bool:
    """`name` as the metaclass's MRO gives it: a user function, None (from `type` or a base the
    interpreter does not know), or False (something else: not followed)."""
    for c in mro(meta):
        v = c.methods.get(name)
        if v is not None:
            return v if isinstance(v, FuncVal) else False
    return None


def make(interp: Interpreter, meta: ClassVal, cls: ClassVal, namespace: dict[str, Value],
         keywords: dict[str, Value], node: ast.ClassDef) -> Value:
    """What `meta(name, bases, namespace, **keywords)` gives, `cls` being the class the
    statement's body makes (`type.__new__`'s result)."""
    new = _user_method(meta, "__new__")
    init = _user_method(meta, "__init__")
    if new is False or init is False:
        return UNKNOWN
    args: list[Value] = [Const(cls.name), TupleVal(cls.bases), DictVal(tuple(namespace.items()))]
    made: Value = cls
    saved = interp.memo_enabled
    interp.memo_enabled = False  # (its `type.__new__` reads the class being made: not a memo key)
    interp.making_classes.append((cls, args))
    try:
        if isinstance(new, FuncVal):
            made = interp.call_user(new, Call(interp, node, [meta, *args], dict(keywords),
                                              [None] * 4, {}, None))
        elif keywords:
            return UNKNOWN  # type.__new__ hands them to `__init_subclass__`: not followed here
        if isinstance(init, FuncVal) and made is cls:
            interp.call_user(bind(init, cls), Call(interp, node, args, dict(keywords), [None] * 3, {}, None))
    finally:
        interp.making_classes.pop()
        interp.memo_enabled = saved
    if made is cls:
        cls.meta = meta
    return made if isinstance(made, ClassVal) else UNKNOWN


def type_new(interp: Interpreter, call: Call) -> Value:
    """`type.__new__(mcs, name, bases, namespace)` reached from a metaclass's `__new__` while a
    class statement runs it: the class its body made, when given that statement's very name,
    bases and namespace; unknown otherwise."""
    if not interp.making_classes or call.kwargs or not call.complete or len(call.args) != 4:
        return UNKNOWN
    cls, (name, bases, namespace) = interp.making_classes[-1]
    mcs, got_name, got_bases, got_ns = call.args
    same = got_name == name and got_bases is bases and got_ns is namespace
    return cls if same and isinstance(mcs, ClassVal) else UNKNOWN

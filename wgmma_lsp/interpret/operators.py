"""Python's operator protocol for objects of the user's classes, as CPython runs it.

`a & b` with `a` an instance of a class defining `__and__` calls `type(a).__and__(a, b)`; when
that is missing or returns `NotImplemented`, `type(b).__rand__(b, a)` is tried (not when both
have the same type), and when `b`'s type is a proper subclass of `a`'s that provides its own
`__rand__`, that one is tried first. `a &= b` tries `type(a).__iand__(a, b)` first, then the
same as `a & b`. `-a` calls `type(a).__neg__(a)`. (The data model, "Emulating numeric types".)
Library code leans on this: tokamax's attention op builds its mask with `mask &= CausalMask()`.

What is claimed: the value a user method returned, when one ran and did not return
`NotImplemented`. Where CPython would go on with a builtin's behaviour (`str % obj` formats,
`[1] * obj` repeats a sequence) or raise `TypeError` (no method accepted the operands), or where
a class's hierarchy is not known (a base the interpreter does not follow may define the
operator), the value is unknown — never a guess. Only Python's own builtin values (numbers,
strings, None, tuples and lists) and instances of the user's classes take part: the operators
of arrays and of library objects are their models'.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.classes import ENUMS, bind, decorated, lookup, mro, opaque_bases
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ClassVal,
    Const,
    DTypeVal,
    FuncVal,
    InstanceVal,
    TupleVal,
    Value,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: The interpreter (interp.Interpreter), as a type: not imported, since it imports this module.
    Interpreter = Any

BINARY: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift",
    ast.RShift: "rshift", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor",
}
UNARY: dict[type, str] = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}
#: Builtin operand types whose own operators give way to an object of a user class's
#: (reflected) method.
_PLAIN = (int, float, complex, bool, str, bytes, type(None))

_NO_METHOD = object()  # the class surely has no such method


def takes_part(v: Value) -> bool:
    """An object of one of the user's classes whose operators this module runs."""
    return isinstance(v, InstanceVal) and v.cls.kind not in ENUMS and v.cls.kind != "namedtuple"


def _method(interp: Interpreter, obj: InstanceVal, name: str) -> object:
    """`type(obj).<name>` bound to `obj`; _NO_METHOD when the class surely has none; None when
    not known (an unknown base, a method that is no plain function)."""
    if opaque_bases(obj.cls):
        return None
    m = lookup(obj.cls, name, interp)
    if m is None:
        return _NO_METHOD
    if isinstance(m, FuncVal) and not decorated(m):
        return bind(m, obj)
    return None


def _call_own(interp: Interpreter, obj: Value, name: str, args: list[Value],
              node: ast.AST | None = None) -> Value | None:
    """`type(obj).<name>(obj, *args)` for an object of a user class whose class defines it;
    None where it does not (or where that is not known)."""
    if not takes_part(obj):
        return None
    method = _method(interp, obj, name)  # type: ignore[arg-type]
    if method is None or method is _NO_METHOD:
        return None
    return _call(interp, method, args, node)  # type: ignore[arg-type]


def _plain(v: Value) -> bool:
    return (isinstance(v, Const) and type(v.value) in _PLAIN) or isinstance(v, TupleVal)


def _declined(v: Value) -> bool:
    return isinstance(v, Const) and v.value is NotImplemented


def _call(interp: Interpreter, method: FuncVal, args: list[Value], node: ast.AST | None) -> Value:
    return interp.call_user(method, Call(interp, node, args, {}, [None] * len(args), {}, None))


def _overrides(interp: Interpreter, sub: ClassVal, base: ClassVal, name: str) -> bool:
    """`sub` is a proper subclass of `base` whose `name` is not `base`'s."""
    if sub is base or base not in mro(sub):
        return False
    return lookup(sub, name, interp) is not lookup(base, name, interp)


def binary(interp: Interpreter, op: ast.operator, left: Value, right: Value,
           node: ast.AST | None, inplace: bool = False) -> Value | None:
    """`left op right` (`left op= right` with `inplace`) where an operand is an object of a user
    class; None where neither is (the caller's own rules apply)."""
    name = BINARY.get(type(op))
    if name is None or not (takes_part(left) or takes_part(right)):
        return None
    for side in (left, right):
        if not (takes_part(side) or _plain(side)):
            return UNKNOWN  # an array, a library object, an unknown: its own operators may run
    if isinstance(op, ast.Mod) and isinstance(left, Const) and isinstance(left.value, (str, bytes)):
        return UNKNOWN  # `"%s" % obj` formats: str's own operator takes any object first
    if inplace and takes_part(left):
        taken = _first_taken(interp, [(_method(interp, left, f"__i{name}__"), right)], node)  # type: ignore[arg-type]
        if taken is not None:
            return taken
    # (of two objects of the same class, only its own method: no reflected call)
    taken = _first_taken(interp, _ordered(interp, left, right, f"__{name}__", f"__r{name}__", False), node)
    # None: no method took the operands: CPython raises TypeError, or goes on with a builtin's
    # own behaviour (`[1] * obj` with an `__index__`, `"%s" % obj`): not claimed either way.
    return UNKNOWN if taken is None else taken


def _ordered(interp: Interpreter, left: Value, right: Value, own: str, reflected: str,
             same_class_reflects: bool) -> list[tuple[object, Value]]:
    """The methods CPython tries, in its order, each with the other operand: `left`'s own, then
    `right`'s reflected one — first when `right`'s class is a proper subclass of `left`'s that
    overrides it."""
    tries: list[tuple[object, Value]] = []
    if takes_part(left):
        tries.append((_method(interp, left, own), right))  # type: ignore[arg-type]
    if takes_part(right) and (same_class_reflects or not (takes_part(left) and left.cls is right.cls)):  # type: ignore[attr-defined]
        entry = (_method(interp, right, reflected), left)  # type: ignore[arg-type]
        if takes_part(left) and _overrides(interp, right.cls, left.cls, reflected):  # type: ignore[attr-defined]
            tries.insert(0, entry)
        else:
            tries.append(entry)
    return tries


def _first_taken(interp: Interpreter, tries: list[tuple[object, Value]], node: ast.AST | None) -> Value | None:
    """The result of the first method that does not return NotImplemented; UNKNOWN at a method
    not known; None when every one declined or none is defined."""
    for method, other in tries:
        if method is None:
            return UNKNOWN
        if method is _NO_METHOD:
            continue
        result = _call(interp, method, [other], node)  # type: ignore[arg-type]
        if not _declined(result):
            return result
    return None


def unary(interp: Interpreter, op: ast.unaryop, operand: Value, node: ast.AST | None) -> Value | None:
    """`-x`, `+x`, `~x` on an object of a user class; None where it is none."""
    name = UNARY.get(type(op))
    if name is None or not takes_part(operand):
        return None
    result = _call_own(interp, operand, f"__{name}__", [], node)
    return UNKNOWN if result is None else result


def truth(interp: Interpreter, obj: Value) -> bool | None:
    """`bool(obj)` for an object of a user class: `type(obj).__bool__(obj)`, else `len(obj) != 0`
    through `__len__`, else True; None where not known."""
    if not takes_part(obj):
        return None
    for name in ("__bool__", "__len__"):
        method = _method(interp, obj, name)  # type: ignore[arg-type]
        if method is None:
            return None
        if method is not _NO_METHOD:
            r = _call(interp, method, [], None)  # type: ignore[arg-type]
            if name == "__bool__":
                return r.value if isinstance(r, Const) and type(r.value) is bool else None  # (else TypeError)
            n = _length_of(r)
            return None if n is None else n != 0
    return True


def length(interp: Interpreter, obj: Value) -> int | None:
    """`len(obj)` for an object of a user class with a `__len__` returning an int >= 0 (CPython
    raises for anything else); None where not known."""
    r = _call_own(interp, obj, "__len__", [])
    return _length_of(r) if r is not None else None


def _length_of(r: Value) -> int | None:
    """What `len()` makes of a `__len__` result: an int >= 0 (CPython raises for anything else)."""
    return int(r.value) if isinstance(r, Const) and type(r.value) in (int, bool) and r.value >= 0 else None


#: `a op b` tries `type(a).<method>` first, then `type(b).<reflected>` (the data model,
#: "rich comparison methods": `==` and `!=` reflect to themselves, `<` to `>`).
COMPARISONS: dict[type, tuple[str, str]] = {
    ast.Eq: ("__eq__", "__eq__"), ast.NotEq: ("__ne__", "__ne__"), ast.Lt: ("__lt__", "__gt__"),
    ast.LtE: ("__le__", "__ge__"), ast.Gt: ("__gt__", "__lt__"), ast.GtE: ("__ge__", "__le__"),
}


def compare(interp: Interpreter, op: ast.cmpop, left: Value, right: Value) -> Value | None:
    """`left op right` where an operand is an object of a user class that defines the comparison
    (or `__contains__`, for `in`); None where it defines none (the caller's rules apply: a
    dataclass's generated `__eq__`, `object`'s identity)."""
    if isinstance(op, (ast.In, ast.NotIn)):
        if not takes_part(right):
            return None
        method = _method(interp, right, "__contains__")  # type: ignore[arg-type]
        if method is _NO_METHOD:
            return None
        if method is None:
            return UNKNOWN
        found = interp.truth(_call(interp, method, [left], None))  # type: ignore[arg-type]
        return UNKNOWN if found is None else Const(found if isinstance(op, ast.In) else not found)
    names = COMPARISONS.get(type(op))
    if names is None or not (takes_part(left) or takes_part(right)):
        return None
    own, reflected = names
    if not (takes_part(left) or _plain(left)):
        return None  # an array's or a library object's own comparison runs first
    tries = _ordered(interp, left, right, own, reflected, True)  # (rich comparisons reflect always)
    if not takes_part(right) and not _plain(right):
        tries.append((None, left))  # an array's, a library object's reflected method: not known
    if all(m is _NO_METHOD or m is None for m, _ in tries):
        if isinstance(op, ast.NotEq) and any(m is _NO_METHOD for m, _ in tries):
            # object.__ne__: the inverse of `==`, whatever defines it
            eq = compare(interp, ast.Eq(), left, right)
            if eq is not None:
                t = interp.truth(eq) if not _declined(eq) else None
                return Const(not t) if t is not None else UNKNOWN
        return None
    taken = _first_taken(interp, tries, None)
    if taken is not None:
        return taken
    if isinstance(op, (ast.Eq, ast.NotEq)):  # declined both ways: identity (`object.__eq__`)
        same = _identical(interp, left, right)
        return UNKNOWN if same is None else Const(same == isinstance(op, ast.Eq))
    return UNKNOWN  # TypeError for an order: not claimed


def _identical(interp: Interpreter, a: Value, b: Value) -> bool | None:
    """`a is b` for an object of a user class and another value (as classes._dataclass_eq: the
    same value twice may stand for two objects after a memo replay)."""
    if isinstance(a, InstanceVal) and isinstance(b, InstanceVal):
        return False if a is not b else (True if not interp.memo_enabled else None)
    return False  # (the other is a builtin value: never an object of a user class)


def getitem(interp: Interpreter, obj: Value, index: Value, node: ast.AST | None) -> Value | None:
    """`obj[index]` through `type(obj).__getitem__`; None where `obj` takes no part here."""
    if not takes_part(obj):
        return None
    result = _call_own(interp, obj, "__getitem__", [index], node)
    return UNKNOWN if result is None else result


def iterated(interp: Interpreter, obj: Value) -> Value | None:
    """What `iter(obj)` gives through `type(obj).__iter__` (a generator, a list's iterator...);
    None where not known (or where it is the object itself: an iterator of its own class)."""
    result = _call_own(interp, obj, "__iter__", [])
    return None if result is None or result is obj or isinstance(result, InstanceVal) else result


def jax_array(interp: Interpreter, obj: Value) -> Value | None:
    """`obj.__jax_array__()` for an object of a user class defining it: how JAX converts such an
    object into an array (`jnp.asarray(x)`, `jnp.array(x)`: tokamax's `GroupSizes`); None where
    its class does not define it (or that is not known)."""
    return _call_own(interp, obj, "__jax_array__", [])


def text(interp: Interpreter, obj: Value, conversion: str = "str") -> str | None:
    """`str(obj)` ("str") or `repr(obj)` ("repr"): of a tuple or list of constants (a shape), as
    CPython prints it; of a NumPy dtype object (`x.dtype`), its name; of an object of a user
    class whose class defines `__str__` / `__repr__` returning a string (`object.__str__` is
    `repr`), what it returns. None where not known (the default `<... object at 0x...>`, a
    dataclass's generated `__repr__`, a dtype's repr)."""
    if isinstance(obj, DTypeVal):
        return obj.dtype.name if conversion == "str" and obj.instance and type(obj.dtype) is DType else None
    if isinstance(obj, TupleVal):
        value = python_value(obj)
        return None if value is NOT_PLAIN else str(value) if conversion == "str" else repr(value)
    if not takes_part(obj):
        return None
    names = ("__str__", "__repr__") if conversion == "str" else ("__repr__",)
    for name in names:
        method = _method(interp, obj, name)  # type: ignore[arg-type]
        if method is None:
            return None
        if method is not _NO_METHOD:
            r = _call(interp, method, [], None)  # type: ignore[arg-type]
            return r.value if isinstance(r, Const) and type(r.value) is str else None
    return None


def formatted(interp: Interpreter, obj: Value, conversion: int, spec: str) -> str | None:
    """What an f-string's `{obj}` / `{obj!s}` / `{obj!r}` gives for a value `text` knows:
    `format(obj, "")` is `str(obj)` unless a user class defines `__format__`; None where not
    known (with a format spec: `object.__format__` raises TypeError, a dtype's too)."""
    if conversion == ord("r"):
        return text(interp, obj, "repr")
    if spec or (conversion != ord("s") and takes_part(obj)
                and _method(interp, obj, "__format__") is not _NO_METHOD):  # type: ignore[arg-type]
        return None
    return text(interp, obj, "str")


NOT_PLAIN = object()  # what `python_value` gives for a value that is not one


def python_value(v: Value, exact: bool = True, depth: int = 0) -> Any:
    """The Python value of a constant, or of a tuple or list (not a NamedTuple, whose repr names
    its fields) made of them, nested; NOT_PLAIN for anything else. `exact`: constants only, not a
    sweep's values (`observe.Swept`: a text made of them would read them unobserved)."""
    if isinstance(v, Const) and (type(v) is Const or not exact):
        return v.value
    if type(v) is not TupleVal or depth > 4:
        return NOT_PLAIN
    out = [python_value(x, exact, depth + 1) for x in v.items]
    if any(x is NOT_PLAIN for x in out):
        return NOT_PLAIN
    return out if v.is_list else tuple(out)


def item_equal(interp: Interpreter, a: Value, b: Value) -> Value:
    """`a == b` as containers compare items (`x in xs`, `xs.index(x)`, `xs == ys`, sets): the same
    object is equal without asking its `__eq__` (CPython's identity shortcut), else `==`. For an
    object of a user class that defines `__eq__`, the same value stands for the same object only
    where no memo replay can have copied it (as `classes._dataclass_eq`): else not known."""
    if a is b and takes_part(a) and _method(interp, a, "__eq__") is not _NO_METHOD:  # type: ignore[arg-type]
        return Const(True) if not interp.memo_enabled else UNKNOWN
    return interp.compare(ast.Eq(), a, b)

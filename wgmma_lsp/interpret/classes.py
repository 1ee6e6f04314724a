"""Classes as Python has them: bases and their method resolution order, `super()`, dataclasses
(defaults, `field(default=..., default_factory=...)`, `__post_init__`, `replace`),
`typing.NamedTuple`, `enum.Enum`/`IntEnum`/`StrEnum` members, pydantic `BaseModel` fields,
properties, `functools.cached_property`, class and static methods.

What a class's bases make it is its `kind` ("" plain, "enum", "intenum", "strenum",
"namedtuple", "pydantic"). A base the interpreter does not know (an unknown value) may do
anything (a metaclass, an `__init__`): what comes from it is unknown, never a guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ApiVal,
    ClassVal,
    Const,
    DictVal,
    FuncVal,
    InstanceVal,
    Opaque,
    PartialVal,
    TupleVal,
    Value,
    Wrapped,
    join,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: The interpreter (interp.Interpreter), as a type: not imported, since it imports this module.
    Interpreter = Any

KIND_OF_BASE = {
    "enum.Enum": "enum", "enum.Flag": "enum", "enum.IntEnum": "intenum", "enum.IntFlag": "intenum",
    "enum.StrEnum": "strenum", "typing.NamedTuple": "namedtuple", "pydantic.BaseModel": "pydantic",
}
#: Bases that add nothing a value depends on.
INERT_BASES = {"typing.Generic", "typing.Protocol", "abc.ABC", "builtins.object"}
ENUMS = ("enum", "intenum", "strenum")


@dataclass(frozen=True)
class NamedTupleVal(TupleVal):
    """An instance of a `typing.NamedTuple` class: a tuple whose items also have names."""

    cls: Any = field(default=None, compare=False, kw_only=True)

    def describe(self) -> str:
        return f"{self.cls.name}({', '.join(i.describe() for i in self.items)})"


@dataclass(eq=False)
class SuperVal(Value):
    """`super()` inside a method of `owner` called on `obj` (an instance, or a class)."""

    obj: Value
    owner: ClassVal


def base_value(interp: Interpreter, node: ast.expr, env: Any) -> Value:
    """A base class as written: `Generic[T]`, `Protocol[T]` are their unsubscripted class."""
    if isinstance(node, ast.Subscript):
        v = interp.eval(node.value, env)
        if isinstance(v, ApiVal) and v.name in ("typing.Generic", "typing.Protocol"):
            interp.eval(node.slice, env)
            return v
        return UNKNOWN if not isinstance(v, ClassVal) else v
    return interp.eval(node, env)


def kind_of(bases: tuple[Value, ...]) -> str:
    for b in bases:
        if isinstance(b, ApiVal) and b.name in KIND_OF_BASE:
            return KIND_OF_BASE[b.name]
        if isinstance(b, ClassVal) and b.kind:
            return b.kind
    return ""


def mro(cls: ClassVal) -> list[ClassVal]:
    """The user classes of `cls`'s method resolution order (C3, as CPython computes it). Computed
    once per class (its bases never change once it is made); callers never change the list."""
    order = cls.__dict__.get("_mro")
    if order is None:
        order = cls.__dict__["_mro"] = _c3(cls)
    return order


def _c3(cls: ClassVal) -> list[ClassVal]:
    seqs = [mro(b) for b in cls.bases if isinstance(b, ClassVal)]
    seqs.append([b for b in cls.bases if isinstance(b, ClassVal)])
    out = [cls]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return out
        for s in seqs:
            head = s[0]
            if not any(head in t[1:] for t in seqs):
                break
        else:  # no consistent order (CPython raises a TypeError): this order, unchecked
            for s in seqs:
                out.extend(c for c in s if c not in out)
            return out
        out.append(head)
        seqs = [t[1:] if t[0] is head else t for t in seqs]


def opaque_bases(cls: ClassVal) -> bool:
    """A base in the hierarchy the interpreter does not know: it may define anything."""
    for c in mro(cls):
        for b in c.bases:
            if not isinstance(b, ClassVal) and not (isinstance(b, ApiVal) and (
                    b.name in KIND_OF_BASE or b.name in INERT_BASES)):
                return True
    return False


def frozen(cls: ClassVal) -> bool:
    """Instances of a frozen dataclass refuse attribute assignment (FrozenInstanceError)."""
    return any(c.frozen for c in mro(cls))


def lookup(cls: ClassVal, name: str, interp: Interpreter | None = None) -> Value | None:
    for c in mro(cls):
        if c.shared and interp is not None and name in interp.shared_writes.get(id(c), ()):
            return interp.shared_writes[id(c)][name]
        v = c.methods.get(name)
        if v is not None:
            return v
    return None


def set_attribute(interp: Interpreter, obj: Value, attr: str, value: Value | None) -> None:
    """`obj.attr = value` (None: `del obj.attr`) on an instance or a class."""
    if isinstance(obj, InstanceVal):
        if frozen(obj.cls):
            if interp.stack:  # dataclasses.FrozenInstanceError: nothing after it on this path
                interp.stack[-1].returned = True
            return
        if obj.shared:
            # (another module's object, older than any call running: not stored, nor replayed
            # where it was read; state a repeated sweep iteration would miss)
            mutation.note_write(interp, 0, obj, attr)
            interp.shared_writes.setdefault(id(obj), {})[attr] = UNKNOWN if value is None else value
        elif value is None:
            if mutation.on_certain_path(interp) and interp.shared_born <= obj.born:
                obj.attrs.pop(attr, None)
            else:
                obj.attrs[attr] = UNKNOWN
        else:  # exact where it surely happens (interpret/mutation.py)
            mutation.set_attr(interp, obj, attr, value)
    elif isinstance(obj, ClassVal):
        # A class is module code's object: exact while module code runs on a certain path.
        mutation.note_write(interp, 0, obj, attr)  # (older than any call running: see above)
        new: Value = UNKNOWN if value is None else value
        old = lookup(obj, attr, interp)
        if not (mutation.on_certain_path(interp) and interp.shared_born == 0 and value is not None):
            new = join(old, new) if old is not None and value is not None else UNKNOWN
        if obj.shared:
            interp.shared_writes.setdefault(id(obj), {})[attr] = new
        else:
            obj.methods[attr] = new


def truth(v: InstanceVal) -> bool | None:
    """An instance is true unless its class says otherwise (`__bool__`, `__len__`)."""
    if opaque_bases(v.cls) or v.cls.kind in ("namedtuple",):
        return None
    if lookup(v.cls, "__bool__") is not None or lookup(v.cls, "__len__") is not None:
        return None
    return True


def decorated(func: FuncVal) -> str:
    """How a method is decorated: "property", "cached_property", "staticmethod", "classmethod"
    or ""."""
    node = func.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    for d in node.decorator_list:
        name = d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ""
        if name in ("property", "cached_property", "staticmethod", "classmethod"):
            return name
    return ""


def bind(func: FuncVal, obj: Value) -> FuncVal:
    return FuncVal(func.node, func.closure, func.name, func.defaults, func.kw_defaults, obj)


def _member_default(interp: Interpreter, v: Value) -> Value:
    """What a field's class attribute is: `field(default=x)` is x."""
    if isinstance(v, Wrapped) and v.api in ("dataclasses.field", "pydantic.Field"):
        return v.kwargs.get("default", UNKNOWN)
    return v


def _no_call(interp: Interpreter) -> Call:
    return Call(interp, None, [], {}, [], {}, None)


ANY_ATTR = "<any attribute>"  # in an instance's attrs: it was given attributes not known by name


def instance_attr(interp: Interpreter, obj: InstanceVal, attr: str) -> Value:
    """`obj.attr` for an attribute the instance does not hold itself."""
    if ANY_ATTR in obj.attrs:
        return UNKNOWN
    m = lookup(obj.cls, attr, interp)
    if m is None:
        from wgmma_lsp.models.absl_parameterized import unexpanded

        made = next((u for c in mro(obj.cls) if (u := unexpanded(c.methods, attr)) is not None), None)
        return made if made is not None else UNKNOWN
    if isinstance(m, FuncVal):
        how = decorated(m)
        if how == "staticmethod":
            return m
        if how == "classmethod":
            return bind(m, obj.cls)
        if how in ("property", "cached_property"):
            value = interp.call_user(bind(m, obj), _no_call(interp))
            if how == "cached_property" and not obj.shared:
                obj.attrs[attr] = value  # computed once, then the instance's own attribute
            return value
        return bind(m, obj)
    if isinstance(m, Wrapped) and m.api == "absl.parameterized_case":  # (models/absl_parameterized.py)
        args, kwargs = m.kwargs["args"], m.kwargs["kwargs"]
        assert isinstance(args, TupleVal) and isinstance(kwargs, DictVal)
        return PartialVal(m.func, (obj, *args.items), dict(kwargs.items))
    return _member_default(interp, m)


def class_attr(interp: Interpreter, cls: ClassVal, attr: str) -> Value:
    """`Cls.attr`."""
    m = lookup(cls, attr, interp)
    if m is None:
        return UNKNOWN
    if isinstance(m, FuncVal):
        how = decorated(m)
        if how == "classmethod":
            return bind(m, cls)
        if how in ("property", "cached_property"):
            return UNKNOWN  # the descriptor object itself
        return m
    return _member_default(interp, m)


def super_of(interp: Interpreter, call: Call) -> Value:
    """`super()` (in a method) or `super(Cls, obj)`."""
    if len(call.args) == 2 and isinstance(call.args[0], ClassVal):
        return SuperVal(call.args[1], call.args[0])
    if call.args or call.kwargs:
        return UNKNOWN
    frame = interp.stack[-1] if interp.stack else None
    func = frame.func if frame is not None else None
    if func is None:
        return UNKNOWN
    obj = func.bound_self
    if obj is None:  # called through the class (`type(self).bind(self=..., ...)`): as in CPython,
        obj = _first_argument(func, call)  # the frame's first argument is the object
    if obj is None:
        return UNKNOWN
    cls = obj if isinstance(obj, ClassVal) else obj.cls if isinstance(obj, InstanceVal) else None
    if cls is None:
        return UNKNOWN
    for c in mro(cls):
        if any(isinstance(m, FuncVal) and m.node is func.node for m in c.methods.values()):
            return SuperVal(obj, c)
    return UNKNOWN


def _first_argument(func: FuncVal, call: Call) -> Value | None:
    """The value of a function's first parameter in the frame running it (`super()` is called
    in the function's own body: `call.env` is that frame's scope)."""
    node = func.node
    if isinstance(node, ast.Lambda) or call.env is None:
        return None
    params = node.args.posonlyargs + node.args.args
    if not params:
        return None
    return call.env.vars.get(params[0].arg)


def super_attr(interp: Interpreter, sup: SuperVal, attr: str) -> Value:
    obj = sup.obj
    cls = obj if isinstance(obj, ClassVal) else obj.cls if isinstance(obj, InstanceVal) else None
    if cls is None:
        return UNKNOWN
    order = mro(cls)
    if sup.owner not in order:
        return UNKNOWN
    rest = order[order.index(sup.owner) + 1:]
    for c in rest:
        m = c.methods.get(attr)
        if m is None:
            continue
        if not isinstance(m, FuncVal):
            return _member_default(interp, m)
        how = decorated(m)
        if how == "staticmethod":
            return m
        if how == "classmethod":
            return bind(m, cls)
        if how in ("property", "cached_property"):
            return interp.call_user(bind(m, obj), _no_call(interp))
        return bind(m, obj)
    if attr == "__init__" and not opaque_bases(cls):
        return _OBJECT_INIT  # object.__init__: takes nothing, does nothing
    if attr == "__new__" and isinstance(obj, ClassVal) and interp.making_classes:
        return TYPE_NEW  # a metaclass's `super().__new__(mcs, ...)`: interpret/metaclasses.py
    return UNKNOWN


_OBJECT_INIT = ApiVal("wgmma_lsp.object_init")
#: `type.__new__` reached from a metaclass's `__new__` while a class statement runs it
#: (interpret/metaclasses.type_new, registered in models/classes.py).
TYPE_NEW = ApiVal("wgmma_lsp.type_new")


def annotated_class(node: ast.expr, env: Any) -> ClassVal | None:
    """The program's class an annotation names (`Config`, `common.Config`), read without
    evaluating anything; None for anything else."""
    if isinstance(node, ast.Name):
        v = env.lookup(node.id)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        mod = env.lookup(node.value.id)
        v = mod.attr(node.attr) if hasattr(mod, "attr") and callable(mod.attr) else None
    else:
        return None
    return v if isinstance(v, ClassVal) and (v.is_dataclass or v.kind == "pydantic") else None


def int_field(cls: ClassVal, name: str) -> bool:
    """Whether `name` is a field of `cls` (a dataclass or pydantic model) annotated `int`, not
    shadowed by a method or property."""
    if lookup(cls, name) is not None:
        return False
    for c in mro(cls):
        annotation = _annotations(c.node).get(name)
        if annotation is not None:
            return (c.is_dataclass or c.kind == "pydantic") \
                and _int_annotation(annotation, c.validated or c.kind == "pydantic")
    return False


#: pydantic's constrained ints: validated, each is an int.
_PYDANTIC_INTS = frozenset({"PositiveInt", "NegativeInt", "NonNegativeInt", "NonPositiveInt", "StrictInt"})


def _int_annotation(node: ast.expr, validated: bool) -> bool:
    """`int`, `Annotated[int, ...]`, and in a class pydantic validates, `pydantic.PositiveInt`
    and its kin (written as such: the names are not resolved)."""
    if isinstance(node, ast.Name) and node.id == "int":
        return True
    if isinstance(node, ast.Subscript):
        head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
        first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else None
        return head == "Annotated" and first is not None and _int_annotation(first, validated)
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return validated and name in _PYDANTIC_INTS


# -- instances ---------------------------------------------------------------------------------

def dataclass_fields(cls: ClassVal) -> list[tuple[str, Value]]:
    """The fields of a dataclass (or pydantic model), its bases' first, in CPython's order."""
    out: dict[str, Value] = {}
    for c in reversed(mro(cls)):
        if c.is_dataclass or c.kind == "pydantic":
            for name, default in c.fields:
                out[name] = default
    return list(out.items())


def _field_value(interp: Interpreter, call: Call, name: str, default: Value) -> Value:
    """The value a field gets when the call does not give it."""
    if isinstance(default, Wrapped) and default.api in ("dataclasses.field", "pydantic.Field"):
        if "default" in default.kwargs:
            return default.kwargs["default"]
        factory = default.kwargs.get("default_factory")
        if factory is None:
            return UNKNOWN  # required: CPython raises a TypeError here
        return interp.call_value(factory, Call(interp, call.node, [], {}, [], {}, call.env))
    return default


def _bind_fields(interp: Interpreter, cls: ClassVal, fields: list[tuple[str, Value]], call: Call,
                 positional: bool) -> dict[str, Value] | None:
    """Field values for a generated `__init__`; None when the call does not bind (TypeError)."""
    names = [n for n, _ in fields]
    # keyword-only fields come after the others in the generated __init__
    order = [n for n, d in fields if not _kw_only(d)] if positional else []
    if len(call.args) > len(order) or set(call.kwargs) - set(names) \
            or set(call.kwargs) & set(order[:len(call.args)]):
        return None
    attrs: dict[str, Value] = {}
    given = dict(zip(order, call.args))
    for name, default in fields:
        if name in given:
            attrs[name] = given[name]
        elif name in call.kwargs:
            attrs[name] = call.kwargs[name]
        elif not call.complete:
            attrs[name] = Opaque(name)  # perhaps in the unknown *args/**kwargs
        else:
            attrs[name] = _field_value(interp, call, name, default)
    if cls.kind == "pydantic" or cls.validated:  # validation converts what is not of the annotated type
        classes = mro(cls)
        for name, v in list(attrs.items()):
            if name in call.kwargs and not _has_annotated_type(classes, name, v):
                attrs[name] = Opaque(name)
    return attrs


def _kw_only(spec: Value) -> bool:
    return isinstance(spec, Wrapped) and spec.api == "dataclasses.field" \
        and isinstance(spec.kwargs.get("kw_only"), Const) and spec.kwargs["kw_only"].value is True


def _has_annotated_type(classes: list[ClassVal], name: str, v: Value) -> bool:
    """Whether pydantic keeps `v` as it is for field `name` of the class whose user MRO is
    `classes` (it converts a value of another type: `1` for a float field is `1.0`): a constant
    of exactly the annotated simple type (`int`, `PositiveInt`, `Annotated[int, ...]`,
    `int | None`), an object of a class; else unknown."""
    for c in classes:
        annotation = _annotations(c.node).get(name)
        if annotation is not None:
            if not isinstance(v, Const):
                return isinstance(v, InstanceVal)
            allowed = _accepted_types(annotation, v.value)
            return allowed is not None and type(v.value).__name__ in allowed
    return False


_BY_VALUE = object()  # (an annotation whose accepted types depend on the value: a `Literal`)
_UNSET = object()


def _accepted_types(ann: ast.expr, value: object) -> set[str] | None:
    """`_simple_types(ann, value)`, kept on the annotation's node where the value plays no part
    (no `Literal` in it): a pydantic class checks every field of every instance made."""
    known = getattr(ann, "_wgmma_simple_types", _UNSET)
    if known is _UNSET:
        by_value = any(isinstance(n, ast.Subscript) and _subscript_base(n) == "Literal" for n in ast.walk(ann))
        known = _BY_VALUE if by_value else _simple_types(ann)
        ann._wgmma_simple_types = known  # type: ignore[attr-defined]
    return _simple_types(ann, value) if known is _BY_VALUE else known  # type: ignore[return-value]


def _subscript_base(n: ast.Subscript) -> str:
    return n.value.id if isinstance(n.value, ast.Name) else n.value.attr if isinstance(n.value, ast.Attribute) else ""


def _annotations(node: ast.ClassDef) -> dict[str, ast.expr]:
    """The annotation of each name a class body annotates (`name: T`), its first one; kept on the
    node (a table would keep every analysed tree alive)."""
    known = getattr(node, "_wgmma_annotations", None)
    if known is not None:
        return known
    out: dict[str, ast.expr] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out.setdefault(stmt.target.id, stmt.annotation)
    node._wgmma_annotations = out  # type: ignore[attr-defined]
    return out


_PYDANTIC_FLOATS = {"PositiveFloat", "NegativeFloat", "NonNegativeFloat", "NonPositiveFloat",
                    "StrictFloat"}


def _simple_types(ann: ast.expr, value: object = None) -> set[str] | None:
    """The Python types an annotation accepts unchanged, when it is made of simple ones;
    `Literal["a", "b"]` accepts a `str` when `value` is one of its strings."""
    if isinstance(ann, ast.Constant) and ann.value is None:
        return {"NoneType"}
    name = ann.id if isinstance(ann, ast.Name) else ann.attr if isinstance(ann, ast.Attribute) else None
    if name in ("int", "float", "str", "bool"):
        return {name}
    if name in _PYDANTIC_INTS:
        return {"int"}
    if name in _PYDANTIC_FLOATS:
        return {"float"}
    if name in ("StrictBool", "StrictStr"):
        return {name[6:].lower()}
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        a, b = _simple_types(ann.left, value), _simple_types(ann.right, value)
        return a | b if a is not None and b is not None else None
    if isinstance(ann, ast.Subscript):
        base = ann.value.id if isinstance(ann.value, ast.Name) else \
            ann.value.attr if isinstance(ann.value, ast.Attribute) else ""
        parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if base == "Annotated" and parts:
            return _simple_types(parts[0], value)
        if base == "Literal" and parts and all(isinstance(p, ast.Constant) and type(p.value) is str
                                               for p in parts):
            return {"str"} if any(p.value == value for p in parts) else set()  # type: ignore[attr-defined]
        if base == "Optional" and len(parts) == 1:
            inner = _simple_types(parts[0], value)
            return inner | {"NoneType"} if inner is not None else None
    return None


def instantiate(interp: Interpreter, cls: ClassVal, call: Call) -> Value:
    """`Cls(...)`: an instance made as CPython makes it, or unknown."""
    if cls.kind in ENUMS:
        return enum_by_value(interp, cls, call)
    if cls.kind == "namedtuple":
        return _namedtuple(interp, cls, call)
    inst = InstanceVal(cls, {})
    init = None
    for c in mro(cls):
        own = c.methods.get("__init__")
        if isinstance(own, FuncVal):
            init = own
            break
        if own is not None:
            return UNKNOWN
        if c.is_dataclass or (c.kind == "pydantic" and c is cls):
            attrs = _bind_fields(interp, c, dataclass_fields(c), call, positional=c.kind != "pydantic")
            if attrs is None:
                return UNKNOWN
            inst.attrs.update(attrs)
            init = "generated"
            break
    if init is None and opaque_bases(cls):
        return inst  # an unknown base's __init__: its attributes are unknown (none claimed)
    if isinstance(init, FuncVal):
        interp.call_user(bind(init, inst), call)
    elif init == "generated":
        post = lookup(cls, "__post_init__")
        if isinstance(post, FuncVal):
            interp.call_user(bind(post, inst), Call(interp, call.node, [], {}, [], {}, call.env))
    elif call.args or call.kwargs:
        return UNKNOWN  # object.__init__ takes no arguments
    return inst


def replace(interp: Interpreter, obj: InstanceVal, call: Call) -> Value:
    """`dataclasses.replace(obj, **changes)`: a new instance made by the class's `__init__` from
    obj's fields and the changes (its `__post_init__` runs again)."""
    fields = dataclass_fields(obj.cls)
    if not fields or not call.complete or len(call.args) != 1 or set(call.kwargs) - {n for n, _ in fields}:
        return UNKNOWN
    written = interp.shared_writes.get(id(obj), {}) if obj.shared else {}
    kwargs = {n: call.kwargs[n] if n in call.kwargs else written.get(n, obj.attrs.get(n, UNKNOWN))
              for n, _ in fields}
    return instantiate(interp, obj.cls, Call(interp, call.node, [], kwargs, [], {}, call.env))


# -- NamedTuple --------------------------------------------------------------------------------

def _namedtuple(interp: Interpreter, cls: ClassVal, call: Call) -> Value:
    attrs = _bind_fields(interp, cls, [(n, d) for n, d in cls.fields], call, positional=True)
    if attrs is None:
        return UNKNOWN
    return NamedTupleVal(tuple(attrs.values()), cls=cls)


def namedtuple_attr(interp: Interpreter, obj: NamedTupleVal, attr: str) -> Value:
    names = [n for n, _ in obj.cls.fields]
    if attr in names and len(obj.items) == len(names):
        return obj.items[names.index(attr)]
    if attr == "_fields":
        return TupleVal(tuple(Const(n) for n in names))
    if attr in ("_replace", "_asdict"):
        return _NamedTupleMethod(obj, attr)
    m = lookup(obj.cls, attr)
    if isinstance(m, FuncVal):
        how = decorated(m)
        if how == "staticmethod":
            return m
        if how == "classmethod":
            return bind(m, obj.cls)
        if how in ("property", "cached_property"):
            return interp.call_user(bind(m, obj), _no_call(interp))
        return bind(m, obj)
    return _member_default(interp, m) if m is not None else UNKNOWN


@dataclass(eq=False)
class _NamedTupleMethod(Value):
    """A method of a namedtuple (`_replace`, `_asdict`)."""
    obj: NamedTupleVal
    name: str


def call_namedtuple_method(interp: Interpreter, m: _NamedTupleMethod, call: Call) -> Value:
    names = [n for n, _ in m.obj.cls.fields]
    if m.name == "_asdict" and not call.args and not call.kwargs:
        return DictVal(tuple(zip(names, m.obj.items)))
    if m.name == "_replace" and not call.args and call.complete and not set(call.kwargs) - set(names):
        items = tuple(call.kwargs.get(n, v) for n, v in zip(names, m.obj.items))
        return NamedTupleVal(items, cls=m.obj.cls)
    return UNKNOWN


# -- enums -------------------------------------------------------------------------------------

def make_members(interp: Interpreter, cls: ClassVal) -> None:
    """Turn an enum's class attributes into its members (an equal value makes an alias)."""
    members: list[InstanceVal] = []
    for name, v in list(cls.methods.items()):
        if name.startswith("_") or isinstance(v, (FuncVal, ClassVal)) or isinstance(v, Wrapped) \
                and v.api == "identity_decorator":
            continue
        if isinstance(v, Wrapped) and v.api == "enum.auto":
            v = _auto(cls, name, members)
        alias = next((m for m in members if isinstance(v, Const) and m.attrs["value"] == v), None)
        member = alias or InstanceVal(cls, {"name": Const(name), "value": v, "_name_": Const(name),
                                            "_value_": v})
        if alias is None:
            members.append(member)
        cls.methods[name] = member


def _auto(cls: ClassVal, name: str, members: list[InstanceVal]) -> Value:
    if cls.kind == "strenum":
        return Const(name.lower())
    values = [m.attrs["value"] for m in members]
    if not values:
        return Const(1)
    if all(isinstance(v, Const) and type(v.value) is int for v in values):
        return Const(max(v.value for v in values) + 1)  # type: ignore[attr-defined]
    return UNKNOWN


def members(cls: ClassVal) -> list[InstanceVal]:
    out: list[InstanceVal] = []
    for v in cls.methods.values():
        if isinstance(v, InstanceVal) and v.cls is cls and v not in out:
            out.append(v)
    return out


def _all_known(cls: ClassVal) -> bool:
    return all(isinstance(m.attrs.get("value"), Const) for m in members(cls))


def enum_by_value(interp: Interpreter, cls: ClassVal, call: Call) -> Value:
    """`Mode(2)`: the member of that value (a ValueError, unknown, when none has it)."""
    if len(call.args) != 1 or call.kwargs or not _all_known(cls):
        return UNKNOWN
    v = call.args[0]
    if isinstance(v, InstanceVal) and v.cls is cls:
        return v
    for m in members(cls):
        if isinstance(v, Const) and m.attrs["value"] == v:
            return m
    return UNKNOWN


def enum_by_name(cls: ClassVal, index: Value) -> Value:
    """`Mode["SMALL"]`."""
    if isinstance(index, Const) and isinstance(index.value, str):
        m = cls.methods.get(index.value)
        if isinstance(m, InstanceVal) and m.cls is cls:
            return m
    return UNKNOWN


def _is_member(v: Value) -> bool:
    return isinstance(v, InstanceVal) and v.cls.kind in ENUMS and "_value_" in v.attrs


def _dataclass_eq(interp: Interpreter, op: ast.cmpop, a: InstanceVal, b: InstanceVal) -> Value:
    """`a == b` of two instances: a dataclass's compares its fields (as tuples) with an instance
    of its own class; without an `__eq__` anywhere, an object equals only itself."""
    for c in (a.cls, b.cls):
        if opaque_bases(c) or a.shared or b.shared:
            return UNKNOWN
    own = [lookup(c, "__eq__", interp) for c in (a.cls, b.cls)]
    eq: bool | None
    if a.cls is b.cls and a.cls.compares_fields and not a.cls.methods.get("__eq__"):
        names = [n for n, _ in dataclass_fields(a.cls)]
        if not all(n in a.attrs and n in b.attrs for n in names):
            return UNKNOWN
        r = interp.compare(ast.Eq(), TupleVal(tuple(a.attrs[n] for n in names)),
                           TupleVal(tuple(b.attrs[n] for n in names)))
        eq = bool(r.value) if isinstance(r, Const) else None
    elif all(m is None for m in own) and not any(c.compares_fields for c in mro(a.cls) + mro(b.cls)):
        # object.__eq__: identity (the same value twice may be two objects after a memo replay)
        eq = False if a is not b else (True if not interp.memo_enabled else None)
    else:
        return UNKNOWN
    if eq is None:
        return UNKNOWN
    return Const(eq if isinstance(op, ast.Eq) else not eq)


def compare(interp: Interpreter, op: ast.cmpop, left: Value, right: Value) -> Value | None:
    """Comparisons with an enum member (None: not one of those)."""
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, InstanceVal) \
            and isinstance(right, InstanceVal) and not _is_member(left) and not _is_member(right):
        return _dataclass_eq(interp, op, left, right)
    if not (_is_member(left) or _is_member(right)) or isinstance(op, (ast.In, ast.NotIn)):
        return None  # (`in` compares with each item: `==` below)
    for side in (left, right):
        if _is_member(side) and any(lookup(side.cls, m) is not None  # type: ignore[union-attr]
                                    for m in ("__eq__", "__ne__", "__lt__", "__hash__")):
            return UNKNOWN  # comparisons of its own
    if isinstance(op, (ast.Is, ast.IsNot)):
        if left is right:
            return Const(isinstance(op, ast.Is))
        if _is_member(left) and _is_member(right) and left.cls is right.cls and _all_known(left.cls):  # type: ignore[union-attr]
            return Const(isinstance(op, ast.IsNot))  # two members, not aliases
        if isinstance(left, Const) or isinstance(right, Const):
            return Const(isinstance(op, ast.IsNot))
        return UNKNOWN
    as_value = [s.attrs["_value_"] if _is_member(s) and s.cls.kind != "enum" else s  # type: ignore[union-attr]
                for s in (left, right)]
    if not any(_is_member(s) for s in as_value):  # IntEnum/StrEnum members compare as their values
        return interp.compare(op, as_value[0], as_value[1])
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if left is right:
            return Const(isinstance(op, ast.Eq))
        other = right if _is_member(left) else left
        if isinstance(other, Const) or (_is_member(left) and _is_member(right)
                                        and left.cls is right.cls and _all_known(left.cls)):  # type: ignore[union-attr]
            return Const(isinstance(op, ast.NotEq))  # a plain Enum member equals only itself
    return UNKNOWN

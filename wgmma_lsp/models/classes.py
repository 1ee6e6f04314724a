"""The standard library's and pydantic's class machinery the interpreter follows
(interpret/classes.py holds the semantics): `super()`, `functools.cached_property`, `enum.auto`,
pydantic's `Field` and validators (validators that only check are inert: they are not run, and
no value depends on them), typing constructs that return what they are given."""

from __future__ import annotations

from wgmma_lsp.interpret import classes, instance_checks, metaclasses, mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, InstanceVal, Value, Wrapped
from wgmma_lsp.models.registry import model


@model("builtins.super")
def _super(call: Call) -> Value:
    return classes.super_of(call.interp, call)  # type: ignore[arg-type]


@model("wgmma_lsp.type_new")
def _type_new(call: Call) -> Value:
    """`type.__new__(mcs, name, bases, namespace)` from a metaclass's `__new__`: the class."""
    return metaclasses.type_new(call.interp, call)


@model("wgmma_lsp.object_init")
def _object_init(call: Call) -> Value:
    """`object.__init__(self)` (through `super().__init__()`): nothing, and no arguments."""
    return Const(None) if not call.args and not call.kwargs else UNKNOWN


@model("functools.cached_property", "enum.unique", "typing.overload", "typing.no_type_check",
       "enum.verify")  # typing.final & co.: models/python.py
def _identity(call: Call) -> Value:
    """Decorators that return what they decorate (how a method is decorated is read from the
    syntax: interpret/classes.decorated)."""
    if len(call.args) == 1 and not call.kwargs:
        return call.args[0]
    return Wrapped("identity_decorator", UNKNOWN, {})


@model("enum.auto")
def _auto(call: Call) -> Value:
    """`enum.auto()`: the value the enum gives it (interpret/classes.make_members)."""
    return Wrapped("enum.auto", UNKNOWN, {}) if not call.args and not call.kwargs else UNKNOWN


@model("pydantic.Field")
def _field(call: Call) -> Value:
    """`Field(default, ...)`, `Field(default_factory=...)`: a field spec, as `dataclasses.field`."""
    kwargs = dict(call.kwargs)
    if call.args:
        kwargs["default"] = call.args[0]
    if isinstance(kwargs.get("default"), Const) and kwargs["default"].value is Ellipsis:
        del kwargs["default"]  # `Field(...)`: required
    return Wrapped("pydantic.Field", UNKNOWN, kwargs)


@model("pydantic.field_validator", "pydantic.model_validator", "pydantic.validator",
       "pydantic.root_validator", "pydantic.field_serializer", "pydantic.model_serializer")
def _validator(call: Call) -> Value:
    """`@field_validator("x")` and the like: the method stays (never run: inert)."""
    return Wrapped("identity_decorator", UNKNOWN, {})


@model("builtins.isinstance")
def _isinstance(call: Call) -> Value:
    """`isinstance(x, C)` where it is decided: a constant, tuple or list against builtin types;
    an instance of a user class against classes (none of them with a base the interpreter does
    not know)."""
    if len(call.args) != 2 or call.kwargs:
        return call.interp.unknown_call(call)
    out = instance_checks.isinstance_of(call.args[0], call.args[1])
    return Const(out) if out is not None else UNKNOWN


@model("builtins.setattr")
def _setattr(call: Call) -> Value:
    """`setattr(obj, "name", value)`: as `obj.name = value`."""
    if len(call.args) == 3 and not call.kwargs and isinstance(call.args[1], Const) \
            and isinstance(call.args[1].value, str):
        classes.set_attribute(call.interp, call.args[0], call.args[1].value, call.args[2])  # type: ignore[arg-type]
        return Const(None)
    return _object_setattr(call)


@model("builtins.object.__setattr__")
def _object_setattr(call: Call) -> Value:
    """`object.__setattr__(self, "name", value)` (a frozen dataclass's `__post_init__`)."""
    if len(call.args) == 3 and not call.kwargs and isinstance(call.args[0], InstanceVal) \
            and isinstance(call.args[1], Const) and isinstance(call.args[1].value, str) \
            and not call.args[0].shared:
        mutation.set_attr(call.interp, call.args[0], call.args[1].value, call.args[2])
        return Const(None)
    if call.args and isinstance(call.args[0], InstanceVal) and not call.args[0].shared:
        obj = call.args[0]  # an attribute not known by its name was set: none of them is known
        for name in obj.attrs:
            obj.attrs[name] = UNKNOWN
        obj.attrs[classes.ANY_ATTR] = UNKNOWN
    return UNKNOWN


@model("typing.cast")
def _cast(call: Call) -> Value:
    return call.args[1] if len(call.args) == 2 and not call.kwargs else UNKNOWN


@model("_NamedTupleMethod()")
def _namedtuple_method(call: Call) -> Value:
    return classes.call_namedtuple_method(call.interp, call.wrapped, call)  # type: ignore[arg-type]

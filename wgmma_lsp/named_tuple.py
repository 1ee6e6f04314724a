"""`typing.NamedTuple`'s class syntax at run time, without importing `typing`.

`typing` costs a one-file `wgmma-lsp check` ~2-2.5 ms to import (and `dataclasses` then asks, of
every field of every dataclass, whether its annotation names `typing.ClassVar`): the modules a
`check` imports name `typing` only for type checkers (`TYPE_CHECKING = False; if TYPE_CHECKING:`,
CONTRIBUTING.md), except for named tuples, made here as `typing.NamedTuple` makes them:
`collections.namedtuple` of the annotated fields (those with a value are its defaults), then the
class body's other names set on it. What type checkers see is `typing.NamedTuple` itself:

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from wgmma_lsp.named_tuple import NamedTuple

Not kept: `typing.Generic` bases, and `__annotations__` holds the annotations as written (with
`from __future__ import annotations`, strings) instead of `typing.ForwardRef`s. A leaf: it imports
only `collections`.
"""

from __future__ import annotations

from collections import namedtuple

_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                         "_field_defaults", "_make", "_replace", "_asdict", "_source"})
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


class _NamedTupleMeta(type):
    def __new__(mcls, typename: str, bases: tuple, ns: dict):
        if bases != (_NamedTupleBase,):
            raise TypeError("can only inherit from a NamedTuple type")
        types = ns.get("__annotations__", {})
        default_names: list[str] = []
        for field_name in types:
            if field_name in ns:
                default_names.append(field_name)
            elif default_names:
                raise TypeError(f"Non-default namedtuple field {field_name} cannot follow default "
                                f"field{'s' if len(default_names) > 1 else ''} "
                                f"{', '.join(default_names)}")
        cls = namedtuple(typename, list(types), defaults=[ns[n] for n in default_names],
                         module=ns["__module__"])
        cls.__annotations__ = cls.__new__.__annotations__ = dict(types)
        for key in ns:
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in cls._fields:
                setattr(cls, key, ns[key])
        return cls


_NamedTupleBase = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})


def NamedTuple(*args, **kwargs):  # noqa: N802  (typing's name)
    """Only the class syntax (`class Span(NamedTuple): ...`) is supported."""
    raise TypeError("wgmma_lsp.named_tuple.NamedTuple: use the class syntax")


NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)  # type: ignore[attr-defined]

"""`==` between JAX values that are plain data: enum members, frozen dataclasses.

Library code dispatches on them: `if precision == jax.lax.DotAlgorithmPreset.BF16_BF16_F32:`,
`if ragged_dot_dimension_numbers == base.DEFAULT_RAGGED_DOT_DIM_NUMS:`. Each answer here is
what CPython gives for the installed JAX's class:

- members of `lax.Precision`, `lax.DotAlgorithmPreset` and `plgpu.MemorySpace` (`enum.Enum`s
  whose members all have distinct values and keep `Enum.__eq__`: identity; `plgpu.SMEM` is
  `MemorySpace.SMEM`) are equal when they are the same member, and never equal to a Python
  constant (`getattr(x, "memory_space", None) == plgpu.TMEM` is False for a barrier);
- `lax.RaggedDotDimensionNumbers` is a frozen dataclass: equal when every field is (its
  `__init__` makes each a tuple of tuples of ints, models/dot_numbers.py).

Anything else is not decided here.
"""

from __future__ import annotations

from wgmma_lsp.interpret.values import ApiVal, Const, TupleVal, Value, Wrapped

#: JAX enums whose members compare by identity (checked against each installed JAX by
#: tests/test_jax_value_equality.py).
IDENTITY_ENUMS = ("lax.Precision", "lax.DotAlgorithmPreset", "plgpu.MemorySpace")
#: Module-level names of enum members (`plgpu.SMEM = MemorySpace.SMEM`, mosaic_gpu/core.py).
MEMBER_ALIASES = {f"plgpu.{m}": f"plgpu.MemorySpace.{m}" for m in ("GMEM", "SMEM", "TMEM", "REGS")}
#: JAX frozen dataclasses (as `Wrapped` values whose kwargs are their fields), compared field-wise.
DATACLASSES = ("lax.RaggedDotDimensionNumbers",)


def member(v: Value) -> tuple[str, str] | None:
    """(enum, member name) when `v` is a member of one of IDENTITY_ENUMS."""
    if isinstance(v, ApiVal):
        enum, _, name = MEMBER_ALIASES.get(v.name, v.name).rpartition(".")
        if enum in IDENTITY_ENUMS and name.isidentifier() and name.isupper():
            return enum, name
    return None


def _plain(v: Value) -> object:
    """A field as the Python data it is (tuples of ints), or a marker when not known."""
    if isinstance(v, Const) and type(v.value) in (int, bool, str, type(None)):
        return v.value
    if isinstance(v, TupleVal):
        items = tuple(_plain(x) for x in v.items)
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
    return _UNKNOWN


_UNKNOWN = object()


def equal(left: Value, right: Value) -> bool | None:
    """`left == right` where CPython's answer is known from the values, else None."""
    a, b = member(left), member(right)
    if a is not None and b is not None:
        return a == b if a[0] == b[0] else False  # members of two different enums: never equal
    if (a is not None and isinstance(right, Const)) or (b is not None and isinstance(left, Const)):
        return False  # a member is equal only to itself: never to None, a number or a string
    if isinstance(left, Wrapped) and isinstance(right, Wrapped) and left.api == right.api \
            and left.api in DATACLASSES:
        if left is right:
            return True
        if left.kwargs.keys() != right.kwargs.keys():
            return None
        for k in left.kwargs:
            x, y = _plain(left.kwargs[k]), _plain(right.kwargs[k])
            if x is _UNKNOWN or y is _UNKNOWN:
                return None
            if x != y:
                return False
        return True
    return None

"""`jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers, lhs_ragged_dimensions,
rhs_group_dimensions)` (jax/_src/lax/lax.py): a frozen dataclass whose `__init__` stores each
argument as tuples (`tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers)`); its fields
read back as such, and two compare field-wise (interpret/jax_value_equality.py)."""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, TupleVal, Value, Wrapped
from wgmma_lsp.models.registry import attribute, model

API = "lax.RaggedDotDimensionNumbers"
FIELDS = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")


def _as_tuples(v: Value, depth: int) -> Value | None:
    """`tuple(...)` applied `depth` levels down, as the dataclass's `__init__` does."""
    if not isinstance(v, TupleVal):
        return None
    if depth == 1:
        return TupleVal(v.items)
    items = [_as_tuples(x, depth - 1) for x in v.items]
    return None if any(i is None for i in items) else TupleVal(tuple(items))  # type: ignore[arg-type]


@model(API)
def _ragged_dot_dimension_numbers(call: Call) -> Value:
    if not call.complete or len(call.args) + len(call.kwargs) != 3:
        return UNKNOWN
    fields = {}
    for i, (name, depth) in enumerate(zip(FIELDS, (3, 1, 1))):
        v = call.get(i, name)
        t = _as_tuples(v, depth)
        if t is None:
            return UNKNOWN
        fields[name] = t
    return Wrapped(API, UNKNOWN, fields)


def _field(name: str):
    def get(obj: Value) -> Value:
        return obj.kwargs.get(name, UNKNOWN) if isinstance(obj, Wrapped) else UNKNOWN
    return get


for _name in FIELDS:
    attribute(f"wrapped:{API}.{_name}")(_field(_name))

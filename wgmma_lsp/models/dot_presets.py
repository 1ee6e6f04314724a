"""`lax.DotAlgorithmPreset.<member>.accumulation_type`: the dtype JAX's property gives for that
member (interpret/jax_dot_presets.py reads its `match` from the installed JAX), as the scalar
type it returns (`np.float32`, not a `numpy.dtype` object), or None."""

from __future__ import annotations


from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import Const, DTypeVal, Value
from wgmma_lsp.models.registry import API_ATTRIBUTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

_ENUM = "lax.DotAlgorithmPreset"


def _member_attribute(interp: Any, name: str, attr: str) -> Value | None:
    enum, _, member = name.rpartition(".")
    if enum != _ENUM or attr != "accumulation_type":
        return None
    table = jax_facts.current().preset_accumulation_types or {}
    if member not in table:
        return None
    dtype = table[member]
    return Const(None) if dtype is None else DTypeVal(DType(dtype))


API_ATTRIBUTES[f"{_ENUM}.*"] = _member_attribute

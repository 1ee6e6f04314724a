"""Block dimensions other than an int in a BlockSpec's `block_shape`: `pl.Element(block_size,
padding)` and `pl.Blocked(block_size)` (jax/_src/pallas/core.py). A Mosaic GPU pipeline's
SMEM block takes `block_size` for either (pipeline.py `_get_block_size`); `None` and
`pl.Squeezed()` dimensions are dropped (models/pallas.py)."""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import UNKNOWN, Value, as_dim, as_shape
from wgmma_lsp.models.registry import model


@dataclass(frozen=True)
class BlockDimVal(Value):
    """`pl.Element(...)` / `pl.Blocked(...)` in a block shape."""
    kind: str  # "Element", "Blocked"
    block_size: Value

    def describe(self) -> str:
        return f"pl.{self.kind}({self.block_size.describe()})"


@model("pl.Element")
def _element(call: Call) -> Value:
    return BlockDimVal("Element", call.get(0, "block_size")) if call.complete else UNKNOWN


@model("pl.Blocked")
def _blocked(call: Call) -> Value:
    return BlockDimVal("Blocked", call.get(0, "block_size")) if call.complete else UNKNOWN


def block_size(d: Value) -> Dim:
    """The size of one block dimension (an int, `pl.Element(n)`, `pl.Blocked(n)`); None if not
    known."""
    if isinstance(d, BlockDimVal):
        return as_dim(d.block_size)
    shape = as_shape(d)
    return shape[0] if shape else None

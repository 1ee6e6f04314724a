"""The ref a kernel body gets for a block of an array (a `BlockSpec` of `pl.pallas_call`, a
pipeline's SMEM slot): its shape from the block shape (squeezed dimensions dropped,
`pl.Element`/`pl.Blocked` sizes), its memory space and transforms from the spec."""

from __future__ import annotations

from wgmma_lsp.interpret.dtypes import SymDType
from wgmma_lsp.interpret.values import (
    ApiVal, ArrayVal, BlockSpecVal, Const, Opaque, OpaqueReplaced, RefVal, ShapeDtypeVal, TransformVal,
    Value,
)
from wgmma_lsp.models.arrays import as_array
from wgmma_lsp.models.block_dims import block_size


def block_ref(array: Value, spec: Value, default_space: str, origin, desc: str) -> RefVal:
    arr = as_array(array) if not isinstance(array, ShapeDtypeVal) else array.array
    shape = arr.shape if arr is not None else None
    dtype = arr.dtype if arr is not None else None
    if arr is None and isinstance(array, Opaque) and not isinstance(array, OpaqueReplaced):
        dtype = SymDType(f"{array.name}.dtype")  # an operand known by name: `x_ref` holds x.dtype
    space = default_space
    transforms: tuple[TransformVal, ...] = ()
    spec_span = None
    if isinstance(spec, BlockSpecVal):
        space = spec.memory_space or "?"
        transforms = spec.transforms
        spec_span = spec.span
        if spec.block_shape is not None:
            if spec.block_shape == ("?",):
                shape = None
            else:
                dims = []
                for d in spec.block_shape:
                    if isinstance(d, Const) and d.value is None:
                        continue  # squeezed
                    if isinstance(d, ApiVal) and d.name in ("pl.Squeezed", "pl.squeezed"):
                        continue
                    dims.append(block_size(d))  # an int, pl.Element(n), pl.Blocked(n)
                shape = tuple(dims)
    elif not (isinstance(spec, Const) and spec.value is None):
        shape, space = None, None  # type: ignore[assignment]
    return RefVal(ArrayVal(shape, dtype), space, "plain", transforms, origin=origin, origin_desc=desc,
                  spec_span=spec_span)

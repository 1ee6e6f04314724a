"""Mosaic GPU's plan for a register array stored to (or loaded from) GMEM, ported from JAX.

A port of jax/experimental/mosaic/gpu/fragmented_array.py (0.12.0.1, 0.12.1; the same code in
both): `Tiling.tile_nested_shape_strides` and `plan_gmem_transfer`, which an optimized store
of an array in a tiled register layout (the WGMMA layout of an accumulator's value) to a GMEM
ref runs, raising `TransferPlanDerivationError` where the threads' accesses would not cover
whole 32-byte sectors or 128-byte cache lines. Pure arithmetic on integers: the same answers as
JAX's NumPy code (`tests/test_gmem_transfer_plan.py` compares the two on many shapes).

JAX 0.10 has no such plan (its GMEM stores of a tiled layout are not checked).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

Nested = tuple[tuple[int, ...], ...]


class TilingError(ValueError):
    """The tiling does not apply to the shape (JAX raises a ValueError of its own there)."""


@dataclass(frozen=True)
class TiledLayout:
    """The parts of JAX's `TiledLayout` the plan reads (no replicated dimensions)."""

    tiles: tuple[tuple[int, ...], ...]
    warp_dims: tuple[int, ...]
    lane_dims: tuple[int, ...]
    vector_dim: int

    @property
    def vector_length(self) -> int:
        base = self.tiles[0]
        shape, _ = tile_nested_shape_strides(self.tiles, tuple((d,) for d in base),
                                             tuple((0,) for _ in base))
        flat = tuple(d for dims in shape for d in dims)  # one entry per tiled dimension here
        return flat[self.vector_dim]


#: `WGMMA_LAYOUT` (fragmented_array.py): the layout of a WGMMA accumulator's value.
WGMMA = TiledLayout(((64, 8), (16, 8), (8, 8), (2,)), warp_dims=(-7,), lane_dims=(-3, -2), vector_dim=-1)


def tile_nested_shape_strides(tiles: tuple[tuple[int, ...], ...], shape: Nested,
                              strides: Nested) -> tuple[Nested, Nested]:
    """`Tiling.tile_nested_shape_strides`: the nested shape and strides after each tile."""
    if len(shape) != len(strides):
        raise TilingError(f"Shape {shape} and strides {strides} must have the same length")
    cur_shape: tuple = shape
    cur_strides: tuple = strides
    for tile in tiles:
        if len(tile) > len(cur_shape):
            raise TilingError(f"Tiling {tiles} does not apply to shape {cur_shape}")
        untiled_shape, tiled_shape = cur_shape[:-len(tile)], cur_shape[-len(tile):]
        untiled_strides, tiled_strides = cur_strides[:-len(tile)], cur_strides[-len(tile):]
        major_shapes: list[list[int]] = []
        major_strides: list[list[int]] = []
        minor_shapes: list[list[int]] = []
        minor_strides: list[list[int]] = []
        for t, dim_shape, dim_strides in zip(tile, tiled_shape, tiled_strides):
            maj_s: list[int] = []
            maj_t: list[int] = []
            min_s: list[int] = []
            min_t: list[int] = []
            if len(dim_shape) != len(dim_strides):
                raise TilingError(f"Shape {shape} and strides {strides} do not match")
            for d, s in zip(reversed(dim_shape), reversed(dim_strides)):
                if d < t:  # more dimensions to tile
                    if t % d:
                        raise TilingError(f"Tiling {tiles} does not apply to shape {cur_shape}")
                    t //= d
                    min_s.append(d)
                    min_t.append(s)
                elif t != 1:  # the last dimension to tile
                    if d % t:
                        raise TilingError(f"Tiling {tiles} does not apply to shape {cur_shape}")
                    min_s.append(t)
                    min_t.append(s)
                    if d != t:
                        maj_s.append(d // t)
                        maj_t.append(s * t)
                    t = 1
                else:  # done tiling
                    maj_s.append(d)
                    maj_t.append(s)
            if t != 1:
                raise TilingError(f"Tiling {tiles} does not apply to shape {cur_shape}")
            major_shapes.append(maj_s[::-1])
            minor_shapes.append(min_s[::-1])
            major_strides.append(maj_t[::-1])
            minor_strides.append(min_t[::-1])
        cur_shape = (*untiled_shape, *major_shapes, *minor_shapes)
        cur_strides = (*untiled_strides, *major_strides, *minor_strides)
    return (tuple(tuple(d) if d else (1,) for d in cur_shape),
            tuple(tuple(d) if d else (1,) for d in cur_strides))


def _unique(xs: "list[int]") -> list[int]:
    return sorted(set(xs))


def gmem_transfer_failure(nested_shape: Nested, nested_strides: Nested, layout: TiledLayout,
                          element_bits: int) -> str | None:
    """`plan_gmem_transfer`'s `TransferPlanDerivationError` message, or None when it plans the
    transfer. Raises TilingError where JAX raises before planning (not claimed)."""
    tiled_shape, tiled_strides = tile_nested_shape_strides(layout.tiles, nested_shape, nested_strides)
    tiles_shape = [list(d) for d in tiled_shape]
    tiles_strides = [list(d) for d in tiled_strides]
    for d in (*layout.warp_dims, *layout.lane_dims, layout.vector_dim):
        tiles_shape[d] = [1] * len(tiles_shape[d])
        tiles_strides[d] = [0] * len(tiles_strides[d])
    flat_shape = [x for dims in tiles_shape for x in dims]
    flat_strides = [x for dims in tiles_strides for x in dims]
    warp_shape = [x for d in layout.warp_dims for x in tiled_shape[d]]
    warp_strides = [x for d in layout.warp_dims for x in tiled_strides[d]]
    lane_shape = [x for d in layout.lane_dims for x in tiled_shape[d]]
    lane_strides = [x for d in layout.lane_dims for x in tiled_strides[d]]
    vector_length = layout.vector_length
    transfer_bytes = (vector_length * element_bits) // 8
    if transfer_bytes > 16:
        return "GMEM transfer with per-thread vector length > 16 bytes is inefficient"
    if transfer_bytes.bit_count() != 1:
        return "GMEM transfer with non-power-of-2 byte length is inefficient"
    # np.dot(list(np.ndindex(*lane_shape)), lane_strides), then * bits // 8 (floor division)
    lane_byte_offsets = [sum(i * s for i, s in zip(idx, lane_strides)) * element_bits // 8
                         for idx in itertools.product(*(range(n) for n in lane_shape))]
    candidates = [d for d, (sz, st) in enumerate(zip(flat_shape, flat_strides)) if sz > 1 and st > 0]
    minor = min(candidates, key=lambda d: (flat_strides[d], -d)) if candidates else None
    if minor is not None and flat_strides[minor] == vector_length:
        factor = min(max(1, 16 // transfer_bytes), flat_shape[minor] & -flat_shape[minor])
        while factor > 1:
            if all(o % (transfer_bytes * factor) == 0 for o in lane_byte_offsets):
                flat_shape[minor] //= factor
                flat_strides[minor] *= factor
                transfer_bytes *= factor
                break
            factor //= 2
    if transfer_bytes < 4:
        return f"GMEM transfer width ({transfer_bytes} bytes/thread) is smaller than 4 bytes"
    sector = 32
    slots_per_sector = sector // transfer_bytes
    slots = [o // transfer_bytes for o in lane_byte_offsets]
    sectors = _unique([s // slots_per_sector for s in slots])
    if len(set(slots)) != len(sectors) * slots_per_sector:
        return "GMEM transfer does not access a whole number of complete 32 byte sectors"
    pairs = list(zip(itertools.chain(flat_shape, warp_shape), itertools.chain(flat_strides, warp_strides)))
    if any(((s * element_bits) // 8) % sector for d, s in pairs if d > 1 and s != 0):
        return "GMEM transfer stride is not aligned to 32B sector size"
    line_sectors = 128 // sector
    offsets = sectors
    for d, s in pairs:
        if d <= 1 or s == 0:
            continue
        step = (s * element_bits) // (8 * sector)
        offsets = [o + k * step for o in offsets for k in range(d)]
    unique = set(offsets)
    if len(unique) != len({o // line_sectors for o in unique}) * line_sectors:
        return "GMEM transfer does not access a whole number of complete 128 byte cache lines"
    return None


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))


def store_nested(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[Nested, Nested]:
    """The nested shape and strides `store_untiled` gives the plan for a ref of `shape` and
    `strides`: the ref reshaped to `(1, ..., 1, *shape)` and tiled by its own shape
    (`transfer_tiled`), so each dimension of size > 1 gets a unit major part."""
    nested_shape = tuple((1, d) if d != 1 else (1,) for d in shape)
    nested_strides = tuple((math.prod(shape) * s, s) if d != 1 else (math.prod(shape) * s,)
                           for d, s in zip(shape, strides))
    return nested_shape, nested_strides

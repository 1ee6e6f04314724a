"""Mosaic GPU's plan for a register array stored to (or loaded from) GMEM, ported from JAX.

A port of jax/experimental/mosaic/gpu/fragmented_array.py (0.12.0.1, 0.12.1; the same code in
both): `Tiling.tile_nested_shape_strides`, `plan_gmem_transfer`, which an optimized store
of an array in a tiled register layout (the WGMMA layout of an accumulator's value) to a GMEM
ref runs, raising `TransferPlanDerivationError` where the threads' accesses would not cover
whole 32-byte sectors or 128-byte cache lines, and `plan_tiled_transfer`, which a store to SMEM
runs, raising it where no staggering of the threads avoids bank conflicts. Pure arithmetic on
integers: the same answers as JAX's NumPy code (`tests/test_transfer_planning.py` compares the
two on many shapes).

JAX 0.10 has no such plan (its GMEM stores of a tiled layout are not checked).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from collections.abc import Callable

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


@functools.lru_cache(maxsize=256)
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


WARP_SIZE = 32
SMEM_BANKS = 32
SMEM_BANK_BYTES = 4


def _flat_parts(tiled_shape: Nested, tiled_strides: Nested, layout: TiledLayout):
    tiles_shape = [list(d) for d in tiled_shape]
    tiles_strides = [list(d) for d in tiled_strides]
    for d in (*layout.warp_dims, *layout.lane_dims, layout.vector_dim):
        tiles_shape[d] = [1] * len(tiles_shape[d])
        tiles_strides[d] = [0] * len(tiles_strides[d])
    return ([x for dims in tiles_shape for x in dims], [x for dims in tiles_strides for x in dims],
            [x for d in layout.warp_dims for x in tiled_shape[d]],
            [x for d in layout.warp_dims for x in tiled_strides[d]],
            [x for d in layout.lane_dims for x in tiled_shape[d]],
            [x for d in layout.lane_dims for x in tiled_strides[d]])


@functools.lru_cache(maxsize=256)
def smem_transfer_plan(nested_shape: Nested, nested_strides: Nested, layout: TiledLayout,
                       element_bits: int, swizzle: int) -> tuple | None:
    """`plan_tiled_transfer` (the plan of an optimized store to or load from SMEM): None for a
    trivial plan, ("staggered", stagger, dim, size, group_stride), or ("error", message) for
    its TransferPlanDerivationError. Raises TilingError where JAX raises before planning."""
    tiled_shape, tiled_strides = tile_nested_shape_strides(layout.tiles, nested_shape, nested_strides)
    tiles_shape, tiles_strides, warp_shape, warp_strides, lane_shape, lane_strides = \
        _flat_parts(tiled_shape, tiled_strides, layout)
    vector_length = layout.vector_length
    swizzle_tile_elems = (16 * 8) // element_bits
    swizzle_group_elems = (128 * 8) // element_bits
    if vector_length * element_bits % 8:
        raise TilingError("vector length is not a whole number of bytes")  # asserted in JAX
    transfer_bytes = (vector_length * element_bits) // 8
    alignment = math.gcd(*(s for s, d in zip(itertools.chain(tiles_strides, warp_strides, lane_strides),
                                              itertools.chain(tiles_shape, warp_shape, lane_shape)) if d > 1))
    if swizzle_tile_elems % alignment and vector_length <= alignment:
        return ("error", "Failed to prove that vector transfers don't cross swizzle tile boundaries. This "
                         "check is incomplete, and does not guarantee that this is a user error, but it "
                         f"might be. transfer_alignment={alignment}")
    if transfer_bytes > SMEM_BANK_BYTES * 4:
        return ("error", f"transfer_bytes={transfer_bytes} > {SMEM_BANK_BYTES * 4} not implemented")
    if element_bits > SMEM_BANK_BYTES * 8:
        return ("error", f"element_bits={element_bits} > {SMEM_BANK_BYTES * 8} not implemented")
    bank_bytes = min(SMEM_BANK_BYTES, transfer_bytes)
    num_banks = SMEM_BANKS * (SMEM_BANK_BYTES // bank_bytes)
    elems_per_bank = (bank_bytes * 8) // element_bits
    num_wavefronts = max(transfer_bytes // bank_bytes, 1)
    wavefront_lanes = WARP_SIZE // num_wavefronts
    lanes = list(itertools.product(*(range(n) for n in lane_shape)))  # np.ndindex order
    if len(lanes) != WARP_SIZE:
        raise TilingError("the layout's lanes are not a warp")  # asserted in JAX
    # lane_mask: the lanes whose index is 0 along every dimension of stride 0 (replicas skipped)
    mask = [all(i == 0 for i, s in zip(idx, lane_strides) if s == 0) for idx in lanes]
    wavefront_masks = [mask[w * wavefront_lanes:(w + 1) * wavefront_lanes] for w in range(num_wavefronts)]
    lane_offsets = [sum(i * s for i, s in zip(idx, lane_strides)) for idx in lanes]
    tiles = list(itertools.product(*(range(n) for n in tiles_shape)))  # np.unravel_index order
    groups = swizzle // 16

    def conflicts(offset_of: "Callable[[tuple[int, ...], int], tuple[int, ...]]") -> bool:
        for tile in tiles:
            banks = []
            for lane in range(WARP_SIZE):
                idx = offset_of(tile, lane)
                off = sum(i * s for i, s in zip(idx, tiles_strides)) + lane_offsets[lane]
                bits = ((off // swizzle_group_elems) % groups) * swizzle_tile_elems
                banks.append(((off ^ bits) // elems_per_bank) % num_banks)
            for w in range(num_wavefronts):
                seen = [b for b, m in zip(banks[w * wavefront_lanes:(w + 1) * wavefront_lanes],
                                          wavefront_masks[w]) if m]
                if len(set(seen)) != len(seen):
                    return True
        return False

    if not conflicts(lambda tile, lane: tile):
        return None
    for dim in (i for i, (s, d) in enumerate(zip(tiles_strides, tiles_shape))
                if d > 1 and s % (SMEM_BANKS * elems_per_bank)):
        for group_stride in (1, 2, 4, 8, 16):
            for stagger in range(1, tiles_shape[dim]):
                def moved(tile: tuple[int, ...], lane: int, dim: int = dim, stagger: int = stagger,
                          group_stride: int = group_stride) -> tuple[int, ...]:
                    if (lane // group_stride) % 2 == 0:
                        return tile
                    out = list(tile)
                    out[dim] = (out[dim] + stagger) % tiles_shape[dim]
                    return tuple(out)
                if not conflicts(moved):
                    return ("staggered", stagger, dim, tiles_shape[dim], group_stride)
    return ("error", "Failed to synthesize a transfer pattern that avoids bank conflicts")

"""The port of Mosaic GPU's GMEM transfer plan (models/transfer_planning.py) against JAX's own
`plan_gmem_transfer` and `WGMMA_LAYOUT`, read from the installed JAX: the same verdict and
message for every shape, stride and element width tried (JAX >= 0.12; 0.10 has no such plan)."""

from __future__ import annotations

import itertools

import pytest

from wgmma_lsp.models import transfer_planning as P

fa = pytest.importorskip("jax.experimental.mosaic.gpu.fragmented_array")
if not hasattr(fa, "plan_gmem_transfer"):
    pytest.skip("this JAX plans no GMEM transfers (0.10)", allow_module_level=True)


def jax_verdict(shape, strides, bits):
    try:
        fa.plan_gmem_transfer(shape, strides, fa.WGMMA_LAYOUT, bits)
    except fa.TransferPlanDerivationError as e:
        return str(e)
    except ValueError:
        return "ValueError"
    return None


def ours(shape, strides, bits):
    try:
        return P.gmem_transfer_failure(shape, strides, P.WGMMA, bits)
    except P.TilingError:
        return "ValueError"


def test_the_wgmma_layout_is_jax_s():
    layout = fa.WGMMA_LAYOUT
    assert P.WGMMA.tiles == layout.tiling.tiles
    assert (P.WGMMA.warp_dims, P.WGMMA.lane_dims, P.WGMMA.vector_dim) == \
        (layout.warp_dims, layout.lane_dims, layout.vector_dim)
    assert P.WGMMA.vector_length == layout.vector_length


CASES = [
    ((rows, cols), row_stride, bits)
    for rows, cols in itertools.product((64, 128, 192), (8, 16, 24, 32, 64, 128, 256))
    for row_stride in sorted({cols, cols + 8, 2 * cols, 3 * cols, 4 * cols, cols + 4, 40, 72, 264})
    if row_stride >= cols
    for bits in (4, 8, 16, 32, 64)
]


@pytest.mark.parametrize("shape,row_stride,bits", CASES)
def test_plan_as_jax(shape, row_stride, bits):
    nested_shape, nested_strides = P.store_nested(shape, (row_stride, 1))
    assert ours(nested_shape, nested_strides, bits) == jax_verdict(nested_shape, nested_strides, bits)


def test_failures_are_found():
    """The comparison is not vacuous: each of JAX's messages comes up among the cases."""
    seen = {jax_verdict(*P.store_nested(shape, (stride, 1)), bits) for shape, stride, bits in CASES}
    assert {None, "GMEM transfer does not access a whole number of complete 32 byte sectors",
            "GMEM transfer does not access a whole number of complete 128 byte cache lines",
            "GMEM transfer width (2 bytes/thread) is smaller than 4 bytes"} <= seen


def test_tiling_as_jax():
    tiling = fa.Tiling(P.WGMMA.tiles)
    for shape in ((64, 8), (128, 64), (64, 24), (32, 8), (64, 12)):
        nested = P.store_nested(shape, P.contiguous_strides(shape))
        try:
            expected = tiling.tile_nested_shape_strides(*nested)
        except ValueError:
            with pytest.raises(P.TilingError):
                P.tile_nested_shape_strides(P.WGMMA.tiles, *nested)
            continue
        assert P.tile_nested_shape_strides(P.WGMMA.tiles, *nested) == expected


def jax_smem_plan(shape, strides, bits, swizzle):
    try:
        plan = fa.plan_tiled_transfer(shape, strides, fa.WGMMA_LAYOUT, bits, swizzle)
    except fa.TransferPlanDerivationError as e:
        return ("error", str(e))
    except (ValueError, AssertionError):
        return "ValueError"
    if isinstance(plan, fa.TrivialTransferPlan):
        return None
    return ("staggered", plan.stagger, plan.dim, plan.size, plan.group_stride)


def our_smem_plan(shape, strides, bits, swizzle):
    try:
        return P.smem_transfer_plan(shape, strides, P.WGMMA, bits, swizzle)
    except P.TilingError:
        return "ValueError"


def _tiled(rows, cols, tile_cols):
    """The nested shape and strides transfer_tiled makes for an SMEM ref tiled (8, tile_cols)."""
    tile = 8 * tile_cols
    return (((rows // 8, 8), (cols // tile_cols, tile_cols)),
            (((cols // tile_cols) * tile, tile_cols), (tile, 1)))


SMEM_CASES = [
    ("untiled", (rows, cols), row_stride, bits, 16)
    for rows, cols in itertools.product((64, 128), (8, 16, 32, 64, 128, 256))
    for row_stride in sorted({cols, cols + 8, 2 * cols, cols + 2, 72})
    if row_stride >= cols
    for bits in (8, 16, 32)
] + [
    ("tiled", (rows, cols), tile_cols, bits, swizzle)
    for rows, cols in itertools.product((64, 128), (64, 128, 256))
    for bits in (8, 16, 32)
    for swizzle in (32, 64, 128)
    for tile_cols in {swizzle * 8 // bits, 64, 32}
    if cols % tile_cols == 0
]


@pytest.mark.parametrize("kind,shape,extra,bits,swizzle", SMEM_CASES)
def test_smem_plan_as_jax(kind, shape, extra, bits, swizzle):
    if kind == "untiled":
        nested = P.store_nested(shape, (extra, 1))
    else:
        nested = _tiled(*shape, extra)
    assert our_smem_plan(*nested, bits, swizzle) == jax_smem_plan(*nested, bits, swizzle)


def test_smem_plans_vary():
    """Not vacuous: trivial, staggered and failed plans all come up among the cases."""
    seen = set()
    for kind, shape, extra, bits, swizzle in SMEM_CASES:
        nested = P.store_nested(shape, (extra, 1)) if kind == "untiled" else _tiled(*shape, extra)
        v = jax_smem_plan(*nested, bits, swizzle)
        seen.add(v if v is None or isinstance(v, str) else v[0])
    assert {None, "staggered", "error"} <= seen

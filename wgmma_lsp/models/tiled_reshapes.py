"""Loads and stores through a reshaped view of a tiled SMEM ref: WG100.

Mirrors jax/_src/pallas/mosaic_gpu/core.py `UntilingTransform.commute_reshape` (0.10.2,
0.12.0.1), which runs when such an access is lowered (either semantics): the reshape's target
dimensions are matched against runs of consecutive dimensions of the ref's (untiled) shape; a
run whose product exceeds its target dimension means the reshape splits a dimension, and raises
"Unfolding dimensions is not supported when commuting an  `UntilingTransform` with a
`ReshapeTransform`" at the access.

Only a reshape made directly on the allocation (no index or transpose before it), an allocation
tiled by a known tiling (then optionally swizzled) of known shape, whole or indexed accesses
through it, on those JAX versions.
"""

from __future__ import annotations

import math

from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.models import refs  # noqa: F401 - its ref models are wrapped below
from wgmma_lsp.models.registry import check_ref_accesses
from wgmma_lsp.rules import tiled_reshape_unfold

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


def unfolds(source: tuple[int, ...], target: tuple[int, ...]) -> bool | None:
    """Whether commute_reshape's walk over `source` meets a run larger than its `target`
    dimension (None: the walk would fail otherwise, not modelled)."""
    components: list[list[int]] = [[]]
    for d in source:
        if len(components) - 1 >= len(target):
            return None
        components[-1].append(d)
        size = math.prod(components[-1])
        if size == target[len(components) - 1]:
            components.append([])
        elif size > target[len(components) - 1]:
            return True
    return False


def _reshaped_tiled(ref: Value) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(allocation shape, reshaped shape) of a reshape view made directly on a tiled allocation."""
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space == "smem" and ref.base is not None):
        return None
    root = ref.root()
    own = list(root.transforms)
    views = list(ref.transforms[len(own):])
    if not own or own[0].kind != "tiling" or not own[0].params or len(own) > 2 \
            or any(t.kind != "swizzle" for t in own[1:]) or list(ref.transforms[:len(own)]) != own:
        return None
    if len(views) != 1 or views[0].kind != "reshape" or not views[0].params:
        return None
    source, target = root.shape, tuple(views[0].params)
    if source is None or not all(isinstance(d, int) for d in (*source, *target)):
        return None
    if not all(isinstance(t, int) for t in own[0].params):
        return None
    return tuple(source), target  # type: ignore[return-value]


def _applies() -> bool:
    v = installed()
    return v is not None and v[:2] in ((0, 10), (0, 12))


def _check(interp: Any, ref: Value, node: Any) -> None:
    if node is None or interp.kernel.lowering not in ("lane", "warpgroup") or not _applies():
        return
    shapes = _reshaped_tiled(ref)
    if shapes is not None and unfolds(*shapes):
        interp.report(tiled_reshape_unfold.RULE, tiled_reshape_unfold.MESSAGE, interp.span(node), node.lineno - 1)


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 36


def install() -> None:
    """Extend the ref load and store models (called once by `registry.load_all`)."""
    check_ref_accesses(_check)

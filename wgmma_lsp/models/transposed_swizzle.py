"""Plain loads and stores through a transposed view of a swizzled SMEM ref: WG101.

Mirrors (jax 0.10.2) jax/_src/pallas/mosaic_gpu/lowering.py `_get_lowering_rule` /
`_swap_lowering_rule` (Lane): with no transposed layout hint (a plain `view[...]`), the view's
transforms are handled with `handle_transposes=True`, which commutes the transpose past the
ref's own transforms; `UnswizzleRef.commute_transpose` (core.py) rejects a permutation that
moves the last (swizzled) dimension: "Can't transpose the swizzled dimension.", at the access.
JAX 0.12 lowers the same access without that error (its transposed loads are accepted), and
0.10's Warpgroup lowering fails in layout inference with no kernel line: neither is claimed.

Only one transpose of known permutation made directly on an SMEM ref (an allocation or a
pallas_call block) whose own transforms are a swizzle, or a 2-D ref's tiling and swizzle.
"""

from __future__ import annotations


from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import RefVal, Value
from wgmma_lsp.models import refs  # noqa: F401 - its ref models are wrapped below
from wgmma_lsp.models.registry import check_ref_accesses
from wgmma_lsp.rules import transpose_swizzled_dim

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


def moves_swizzled_dim(ref: Value) -> bool:
    """A view of one transpose, directly on a swizzled SMEM ref, that moves its last dimension."""
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space == "smem" and ref.base is not None):
        return False
    root = ref.root()
    own = list(root.transforms)
    views = list(ref.transforms[len(own):])
    if list(ref.transforms[:len(own)]) != own or len(views) != 1 or views[0].kind != "transpose":
        return False
    perm = views[0].params
    shape = root.shape
    if shape is None or not perm or len(perm) != len(shape) or not all(isinstance(p, int) for p in perm):
        return False
    if [t.kind for t in own] == ["swizzle"]:
        return perm[-1] != len(shape) - 1
    if [t.kind for t in own] == ["tiling", "swizzle"] and len(shape) == 2 and len(own[0].params) == 2:
        return tuple(perm) == (1, 0)
    return False


def _applies(interp: Any) -> bool:
    v = installed()
    return interp.kernel.lowering == "lane" and v is not None and v[:2] == (0, 10)


#: A value in one of these layouts is stored through a transposed view without the view's
#: transpose being commuted (`_swap_lowering_rule`: `handle_transposes=not transposed_value`).
TRANSPOSED_LAYOUTS = frozenset({"plgpu.Layout.WGMMA_TRANSPOSED", "plgpu.Layout.TCGEN05_TRANSPOSED"})


def _check(interp: Any, ref: Value, node: Any) -> None:
    if node is not None and _applies(interp) and moves_swizzled_dim(ref):
        interp.report(transpose_swizzled_dim.RULE, transpose_swizzled_dim.MESSAGE, interp.span(node),
                      node.lineno - 1)


def _check_store(interp: Any, ref: Value, node: Any, value: Value) -> None:
    """A store of a value in a transposed layout (`plgpu.layout_cast(x, WGMMA_TRANSPOSED)`,
    JAX's own `test_transposed_layout`) keeps the transpose: no error here."""
    if getattr(value, "layout", None) not in TRANSPOSED_LAYOUTS:
        _check(interp, ref, node)


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 37


def install() -> None:
    """Extend the ref load and store models (called once by `registry.load_all`)."""
    check_ref_accesses(_check, store=_check_store)

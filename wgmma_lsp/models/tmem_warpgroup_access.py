"""Warpgroup: a TMEM ref read or written with `ref[...]` (WG077).

Under Lane semantics the lowering of `get`/`swap` refuses a TMEM ref on the access's line
(`models/refs.py`). Under Warpgroup semantics it lowers the access to a `mosaic_gpu.vector_load`
/ `vector_store` of the TMEM memref, whose layout-inference rules
(`_vector_load_constraint_system`, `_vector_store_constraint_system`) constrain SMEM operands
only: the TMEM operand is given no layout, and the check that every op got its layouts
(`_ensure_right_number_of_layouts`, `jax/experimental/mosaic/gpu/layout_inference.py`) raises
`Expected the same number of in_tmem_layouts (0) as TMEM ref operands (1). op=` followed by the
op's MLIR text (its SSA numbers depend on the whole kernel). JAX 0.10 and 0.12 alike, with no
line of the kernel in JAX's traceback: reported at the access, blamed at the `plgpu.kernel`
call, with JAX's message up to the op text.

Claimed for a whole access (`ref[...]`) of a TMEM allocation with 128 rows of a 32-bit type,
not a view, a stored value of the ref's shape (fixture
lowering_kernel/kernel_level_tmem_plain_access_warpgroup.py).
"""

from __future__ import annotations


from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import ArrayVal, Const, RefVal, Value
from wgmma_lsp.models.registry import GETITEM, SETITEM
from wgmma_lsp.rules.base import kernel_level_note

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: JAX's message, up to the op text it appends.
MESSAGE = "Expected the same number of in_tmem_layouts (0) as TMEM ref operands (1)."
MIRRORED = ((0, 10), (0, 12))


def _claimed(interp: Any, ref: Value, index: Value) -> bool:
    if interp.kernel.lowering != "warpgroup" or interp.kernel.span is None:
        return False
    version = installed()
    if version is None or version[:2] not in MIRRORED:
        return False
    if not isinstance(ref, RefVal) or ref.kind != "tmem" or ref.base is not None:
        return False
    if not (isinstance(index, Const) and index.value is Ellipsis):
        return False
    shape = ref.shape
    return (shape is not None and len(shape) == 2 and shape[0] == 128 and isinstance(shape[1], int)
            and T.concrete(ref.dtype) is not None and T.itemsize_bits(ref.dtype) == 32)


def _report(interp: Any, node: Any, load: bool) -> None:
    from wgmma_lsp.rules import tmem_plain_access

    ks = interp.kernel.span
    how = ("TMEM read with `ref[...]` (use plgpu.async_load_tmem)" if load
           else "TMEM written with `ref[...] =` (use plgpu.async_store_tmem)")
    interp.report(tmem_plain_access.RULE, f"{how}: {MESSAGE}", interp.span(node), ks.line,
                  related=[kernel_level_note(ks)],
                  data={"semantics": "warpgroup", "jax_message": MESSAGE})


def _wrap_refs() -> None:
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp, ref, index, node):
        out = get(interp, ref, index, node)
        if node is not None and _claimed(interp, ref, index):
            _report(interp, node, load=True)
        return out

    def setitem(interp, ref, index, value, target, value_node, aug):
        put(interp, ref, index, value, target, value_node, aug)
        if target is not None and not aug and _claimed(interp, ref, index) and isinstance(value, ArrayVal) \
                and value.shape == ref.shape:
            _report(interp, target, load=False)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem


INSTALL_ORDER = 40


def install() -> None:
    """Extend the ref access models (called once by `registry.load_all`, after every model
    module was imported: importing this module changes no table)."""
    _wrap_refs()

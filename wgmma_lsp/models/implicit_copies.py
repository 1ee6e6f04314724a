"""`pl.pallas_call`'s implicit copies (JAX 0.10, Mosaic GPU, Lane semantics): the pipeline copies
every SMEM BlockSpec block in with a TMA before the kernel body runs, and the body's whole-block
loads and stores spread the block over the warpgroup's 128 threads.

Mirrors (jax 0.10.2) jax/_src/pallas/mosaic_gpu/pallas_call_registration.py ->
lowering.py `lower_pipelined_jaxpr_to_module` (its `emit_pipeline` copies each input block with
`copy_gmem_to_smem`, whose Lane lowering in primitives.py raises WG070's "Only copies transferring
a number of bytes divisible by the warpgroup size are supported" for a block of other than a
multiple of 128 bytes, blamed on the pallas_call) and fragmented_array.py
`FragmentedArray.load_strided` / `store_untiled` (WG085: an untransformed ref must hold a
multiple of 128 elements, blamed on the load or store). 0.12 does not lower a Mosaic GPU
pallas_call at all (WG093). `plgpu.emit_pipeline` makes the same copies in a `plgpu.kernel`, on
0.10 and 0.12 (pipeline.py): WG070 is then blamed on the plgpu.kernel call (no kernel line is in
JAX's traceback), WG085 on the body's load or store.
"""

from __future__ import annotations

import math
import weakref

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.jax_source import pallas_call_lowers_mosaic_gpu
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import RefVal, TupleVal, Value
from wgmma_lsp.models import pipelines, refs  # noqa: F401 - their models are wrapped below
from wgmma_lsp.models.indexing import is_whole
from wgmma_lsp.models.registry import GETITEM, SETITEM
from wgmma_lsp.rules import strided_elements, tma_bytes_per_warpgroup

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

WARPGROUP_SIZE = 128
_MLIR = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
         "int16": "i16", "int8": "i8", "int64": "i64", "uint32": "i32", "uint16": "i16", "uint8": "i8"}


def _applies(interp: Any, pallas_call: bool = True) -> bool:
    """Lane lowering of a pallas_call (JAX 0.10) or of an emit_pipeline (0.10, 0.12)."""
    v = installed()
    if interp.kernel.lowering != "lane" or v is None:
        return False
    if pallas_call:
        return v[:2] == (0, 10) and pallas_call_lowers_mosaic_gpu() is True
    return v[:2] in ((0, 10), (0, 12))


def _block(ref: Value) -> tuple[tuple[int, ...], T.DType] | None:
    """A pallas_call or emit_pipeline SMEM block with no transforms, of known shape and dtype."""
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space in ("smem", "default")
            and not ref.transforms and ref.origin_desc.startswith(("pallas_call ", "pipeline block "))):
        return None
    shape, dtype = ref.shape, T.concrete(ref.dtype)
    if shape is None or dtype is None or not shape or not all(isinstance(d, int) for d in shape):
        return None
    return shape, dtype  # type: ignore[return-value]


def check_input_copies(interp: Any, refs_: list[Value], n_inputs: int, span: Any, line: int,
                       pallas_call: bool = True) -> bool:
    """The pipeline's copies of the input blocks, in order: WG070 at the pallas_call (or the
    plgpu.kernel of an emit_pipeline) for the first one whose byte count is not a multiple of
    128. True when one was reported."""
    if not _applies(interp, pallas_call):
        return False
    for ref in refs_[:n_inputs]:
        block = _block(ref)
        if block is None:
            if not (isinstance(ref, RefVal) and ref.space in ("gmem", "any")):
                return False  # a copy not known: a later one cannot be claimed
            continue
        shape, dtype = block
        nbytes = math.prod(shape) * T.itemsize_bits(dtype) // 8
        if nbytes % WARPGROUP_SIZE:
            interp.report(tma_bytes_per_warpgroup.RULE,
                          "Only copies transferring a number of bytes divisible by the warpgroup size are "
                          f"supported. Got bytes={nbytes} but warpgroup size is {WARPGROUP_SIZE}",
                          span, line, data={"implicit_copy": True, "block_shape": list(shape)})
            return True
    return False


#: The line of each interpreter's last load that got WG085: a store on that line is never reached
#: (the statement fails at its load, which Python evaluates first), so it gets none.
_FAILED_LOAD: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()


def _check_access(interp: Any, ref: Value, index: Value, node: Any, store: bool = False) -> None:
    if node is None or not is_whole(index):
        return
    if store and _FAILED_LOAD.get(interp) == node.lineno:
        return
    block = _block(ref)
    if block is None or not _applies(interp, ref.origin_desc.startswith("pallas_call ")):  # type: ignore[union-attr]
        return
    shape, dtype = block
    n = math.prod(shape)
    mlir = _MLIR.get(dtype.name)
    if n % WARPGROUP_SIZE == 0 or mlir is None:
        return
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    ref_ty = (f"memref<{'x'.join(map(str, shape))}x{mlir}, strided<[{', '.join(map(str, strides))}], offset: ?>, "
              "#gpu.address_space<workgroup>>")
    interp.report(strided_elements.RULE,
                  f"{ref_ty} must have a number of elements that is a multiple of {WARPGROUP_SIZE} (got {n})",
                  interp.span(node), node.lineno - 1)
    if not store:
        _FAILED_LOAD[interp] = node.lineno


def _wrap() -> None:
    get, put = GETITEM["ref"], SETITEM["ref"]

    def getitem(interp, ref, index, node):
        out = get(interp, ref, index, node)
        _check_access(interp, ref, index, node)
        return out

    def setitem(interp, ref, index, value, target, value_node, aug):
        put(interp, ref, index, value, target, value_node, aug)
        _check_access(interp, ref, index, target, store=True)

    GETITEM["ref"], SETITEM["ref"] = getitem, setitem


def _wrap_emit_pipeline() -> None:
    """`plgpu.emit_pipeline(...)(*gmem_refs)` in a `plgpu.kernel`: its prologue copies each input
    block in (pipeline.py); JAX's traceback names no line of the kernel body, only the
    plgpu.kernel call (checked against 0.10.2 and 0.12.0.1)."""
    from wgmma_lsp.models.registry import MODELS

    original = MODELS["plgpu.emit_pipeline()"]

    def wrapped(call: Any) -> Value:
        interp = call.interp
        kw = call.wrapped.kwargs
        in_specs = pipelines._flat(kw.get("in_specs", TupleVal(())))
        gmem = pipelines._flat(TupleVal(tuple(call.args)))
        kernel = interp.kernel.span
        launcher = next((c for c in reversed(interp.context)
                         if c.startswith(("plgpu.kernel at line ", "pallas_call at line "))), "")
        if in_specs is not None and gmem is not None and call.complete and kernel is not None \
                and launcher.startswith("plgpu.kernel") and len(gmem) >= len(in_specs):
            blocks = [pipelines.smem_block(g, s, call, i) for i, (g, s) in enumerate(zip(gmem, in_specs))]
            check_input_copies(interp, blocks, len(blocks), kernel, kernel.line, pallas_call=False)
        return original(call)

    MODELS["plgpu.emit_pipeline()"] = wrapped


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 20


def install() -> None:
    """Extend the models registered by other modules (called once by `registry.load_all`, after
    every model module was imported: importing this module changes no table)."""
    _wrap()
    _wrap_emit_pipeline()

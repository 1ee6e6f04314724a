"""What lowering a `plgpu.wgmma` call does with its operands, under either lowering semantics.

Called by the `plgpu.wgmma` model once the trace-time checks passed (shapes, dtypes, an
accumulator ref). Mirrors, in JAX 0.10's order of checks:

- Lane semantics: `_wgmma_lowering` in `jax/_src/pallas/mosaic_gpu/primitives.py` (operand
  transforms: tiling `(8, swizzle // itemsize)` then swizzle, equal swizzles), then
  `mosaic/gpu/wgmma.py: wgmma` (A in registers, accumulator dtype per element type, N, K) and
  `wgmma_m64` (transposes only for 16-bit types);
- Warpgroup semantics: layout inference infers missing transforms; what it cannot satisfy is
  "Failed to infer a possible set of layouts" (no kernel frame: JAX blames the `pallas_call`),
  the `mosaic_gpu.wgmma` op verifier reports at the `wgmma` line, and the same `wgmma.py` checks
  run afterwards, outside the kernel's frame.

Every check claims only operands whose form is proven (SMEM refs whose own transforms are known,
views made of `.at[...]` and one `transpose_ref(..., (1, 0))`); anything else stops silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.models.memory_spaces import lowered_space
from wgmma_lsp.models.user_spelling import allocated_here, jnp_alias, module_alias
from wgmma_lsp.interpret.values import ArrayVal, RefVal, Value
from wgmma_lsp.rules.base import Related, kernel_level_note

# MLIR spelling of element types (what wgmma.py's messages print).
MLIR = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32", "uint32": "i32",
        "int8": "i8", "uint8": "i8", "int16": "i16", "uint16": "i16",
        "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2"}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1, "int16": 2,
            "uint16": 2, "int32": 4, "uint32": 4, "float8_e4m3fn": 1, "float8_e5m2": 1}
WGMMA_TYPES = {"float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "int8", "uint8"}
REGISTER_TYPES = {"float16", "bfloat16", "int8", "uint8", "float8_e5m2", "float8_e4m3fn"}
_SWIZZLE_MODE = {128: "k128ByteSwizzle", 64: "k64ByteSwizzle", 32: "k32ByteSwizzle"}


@dataclass(frozen=True)
class Operand:
    """An SMEM operand's own transforms and the view on top of it."""

    ref: RefVal
    tiling: tuple | None  # the TilingTransform's tile, None if absent
    swizzle: int | None  # the SwizzleTransform's swizzle, None if absent
    own: tuple[str, ...]  # kinds of the buffer's own transforms, in order
    transposed: bool  # viewed through transpose_ref(..., (1, 0))
    has_view: bool  # any `.at[...]` / transpose view on top
    slot_view: bool = False  # a pipeline block: the body gets `smem_ref.at[slot]` (an indexer)

    @property
    def tiled_swizzled(self) -> bool:
        return self.own == ("tiling", "swizzle")

    @property
    def untransformed(self) -> bool:
        return self.own == () and not self.has_view and not self.slot_view

    @property
    def indexed_only(self) -> bool:
        """No transforms of its own, seen through the pipeline's slot indexer only: the Lane
        lowering consumes the indexer and finds no transforms left (`[]`)."""
        return self.own == () and self.slot_view and not self.has_view


#: Transforms an SMEM operand may be seen through when the op verifier checks the accumulator.
_KNOWN_VIEWS = frozenset({"tiling", "swizzle", "index", "transpose", "reshape"})


def operand(v: Value) -> Operand | None:
    """An SMEM ref operand whose transforms are all known, or None."""
    if not isinstance(v, RefVal) or v.kind != "plain":
        return None
    root = v.root()
    if lowered_space(root) != "smem" or v.dtype is None:
        return None
    own = root.transforms
    if any(t.kind not in ("tiling", "swizzle") or not t.params for t in own):
        return None
    view = v.transforms[len(own):]
    if v.base is None and view:
        return None
    kinds = [t.kind for t in view]
    if any(k not in ("index", "transpose") for k in kinds):
        return None
    transposes = [t for t in view if t.kind == "transpose"]
    if transposes and (len(transposes) > 1 or kinds[-1] != "transpose"
                       or tuple(transposes[0].params) != (1, 0)):
        return None
    tiling = next((tuple(t.params) for t in own if t.kind == "tiling"), None)
    swz = next((t.params[0] for t in own if t.kind == "swizzle"), None)
    if tiling is not None and not all(isinstance(x, int) for x in tiling):
        return None
    if swz is not None and not isinstance(swz, int):
        return None
    return Operand(v, tiling, swz, tuple(t.kind for t in own), bool(transposes), bool(view),
                   root.attr("pipeline_slot") is True)


def operand_origin(ref: RefVal) -> list[Related]:
    """Where an operand's buffer got its memory space and transforms (its BlockSpec or SMEM
    allocation), as a related location."""
    root = ref.root()
    span = root.spec_span or root.origin
    if span is None:
        return []
    own = root.transforms_text() or "no transforms"
    return [Related(span, f"allocated here ({root.origin_desc or 'operand'}) as {root.aval()}, {own}")]


def _known_dims(*dims) -> bool:
    return all(isinstance(d, int) for d in dims)


def transforms_repr(op: Operand) -> str:
    """How `_wgmma_lowering` prints the transforms it could not match (lowering-side objects)."""
    parts = []
    for kind in reversed(op.own):  # JAX lists the inverse transforms, innermost first
        if kind == "tiling":
            parts.append(f"UntilingTransform(tiling={op.tiling})")
        else:
            parts.append(f"UnswizzleRef(swizzle={op.swizzle})")
    return "[" + ", ".join(parts) + "]"


class WgmmaLowering:
    """One `plgpu.wgmma(acc, a, b)` call whose trace-time checks passed."""

    def __init__(self, call: Call, acc: RefVal, a: Value, b: Value) -> None:
        self.call, self.acc, self.a, self.b = call, acc, a, b
        self.interp = call.interp
        self.sem = self.interp.kernel.lowering

    # -- reporting -----------------------------------------------------------------------
    def _report(self, rule, message: str, *, kernel_level: bool = False, data: dict | None = None,
                span=None, cause: RefVal | None = None) -> None:
        """Report on the wgmma call; `kernel_level` errors have no kernel frame in JAX's
        traceback, which blames the `pallas_call`/`plgpu.kernel` call instead."""

        related: list[Related] = []
        blame = self.call.line
        if kernel_level:
            ks = self.interp.kernel.span
            if ks is None:
                return
            blame = ks.line
            related.append(kernel_level_note(ks))
        # The related location is the cause: the operand's allocation or BlockSpec when the
        # operand is at fault, else the accumulator's.
        related += operand_origin(cause) if cause is not None else allocated_here(self.acc)
        info = {"semantics": self.sem}
        info.update(data or {})
        self.interp.report(rule, message, span or self.call.span, blame, related=related, data=info)

    # -- entry ---------------------------------------------------------------------------
    def check(self) -> None:
        from wgmma_lsp.rules import accumulator_transforms

        if self.sem not in ("lane", "warpgroup"):
            return
        kinds = {t.kind for t in self.acc.transforms}
        if self.acc.base is not None and "unknown" not in kinds and kinds - {"index"}:
            # Both semantics: `_wgmma_lowering` / `_wgmma_warpgroup_lowering` take only indexers.
            self._report(accumulator_transforms.RULE, accumulator_transforms.MESSAGE,
                         span=self.call.span_of(0, "acc"))
            return
        if self.sem == "lane":
            self._lane()
        elif self.sem == "warpgroup":
            self._warpgroup()

    # -- Lane: _wgmma_lowering -----------------------------------------------------------
    def _lane(self) -> None:
        from wgmma_lsp.rules import (
            wgmma_lhs_untransformed, wgmma_operand_transforms, wgmma_rhs_untransformed,
            wgmma_swizzle_mismatch, wgmma_tiling_swizzle_fit,
        )

        a, b = self.a, self.b
        if self.acc.base is not None:
            return  # acc views: indexing transforms are checked first (not modelled)
        lhs_swizzle = None
        if isinstance(a, RefVal):
            op = operand(a)
            if op is None:
                return
            if op.indexed_only:
                self._report(wgmma_operand_transforms.RULE, "WGMMA lhs has unsupported transforms: [].",
                             span=self.call.span_of(1, "a"), cause=op.ref)
                return
            if op.untransformed:
                self._report(wgmma_lhs_untransformed.RULE, wgmma_lhs_untransformed.MESSAGE,
                             span=self.call.span_of(1, "a"), data=self._fix_data(op, b, "lhs"),
                             cause=op.ref)
                return
            if not op.tiled_swizzled:
                if op.has_view:
                    return
                self._report(wgmma_operand_transforms.RULE,
                             f"WGMMA lhs has unsupported transforms: {transforms_repr(op)}.",
                             span=self.call.span_of(1, "a"))
                return
            itemsize = ITEMSIZE.get(op.ref.dtype.name)  # type: ignore[union-attr]
            if itemsize is None:
                return
            expected = (8, op.swizzle // itemsize)  # type: ignore[operator]
            if op.tiling != expected:
                self._report(wgmma_tiling_swizzle_fit.RULE,
                             f"WGMMA lhs tiling does not fit swizzle. Got tiling={op.tiling}, "
                             f"expected {expected}", span=self.call.span_of(1, "a"))
                return
            lhs_swizzle = op.swizzle
        elif not isinstance(a, ArrayVal):
            return
        opb = operand(b)
        if opb is None:
            return
        if opb.indexed_only:
            self._report(wgmma_operand_transforms.RULE, "WGMMA rhs has unsupported transforms: [].",
                         span=self.call.span_of(2, "b"), cause=opb.ref)
            return
        if opb.untransformed and matches(">=0.12"):
            # 0.12 has no `assert b_transforms is not None`: an untransformed rhs has unsupported
            # transforms, [] (fixture lowering_kernel/wgmma_rhs_untransformed_lane_by_version.py)
            self._report(wgmma_operand_transforms.RULE, "WGMMA rhs has unsupported transforms: [].",
                         span=self.call.span_of(2, "b"), cause=opb.ref)
            return
        if opb.untransformed:
            self._report(wgmma_rhs_untransformed.RULE, wgmma_rhs_untransformed.MESSAGE,
                         span=self.call.span_of(2, "b"), data=self._fix_data(opb, a, "rhs"),
                         cause=opb.ref)
            return
        if not opb.tiled_swizzled:
            if opb.has_view:
                return
            self._report(wgmma_operand_transforms.RULE,
                         f"WGMMA rhs has unsupported transforms: {transforms_repr(opb)}.",
                         span=self.call.span_of(2, "b"))
            return
        if lhs_swizzle is not None:
            if opb.swizzle != lhs_swizzle:
                self._report(wgmma_swizzle_mismatch.RULE, wgmma_swizzle_mismatch.LANE_MESSAGE,
                             span=self.call.span_of(2, "b"), cause=opb.ref,
                             data={"lhs_swizzle": lhs_swizzle, "rhs_swizzle": opb.swizzle})
                return
            itemsize = ITEMSIZE.get(opb.ref.dtype.name)  # type: ignore[union-attr]
            if itemsize is None or opb.tiling != (8, opb.swizzle // itemsize):  # type: ignore[operator]
                if itemsize is not None:
                    self._report(wgmma_tiling_swizzle_fit.RULE, "WGMMA rhs tiling does not fit swizzle",
                                 span=self.call.span_of(2, "b"))
                return
        self._mosaic_wgmma(opb, kernel_level=False)

    # -- Warpgroup: layout inference, the op verifier, then wgmma.py --------------------------
    def _warpgroup(self) -> None:
        from wgmma_lsp.rules import (
            accumulator_tile_shape, wgmma_operand_transforms, wgmma_swizzle_mismatch,
            wgmma_tiling_swizzle_fit,
        )

        a, b = self.a, self.b
        if self.acc.base is not None:
            return
        if self._verifier_accumulator_type(b):
            return
        opa = operand(a) if isinstance(a, RefVal) else None
        opb = operand(b)
        if opb is None or (isinstance(a, RefVal) and opa is None) or not isinstance(a, (RefVal, ArrayVal)):
            return
        ops = [o for o in (opa, opb) if o is not None]
        for o in ops:
            if o.own == ("swizzle",) and not o.has_view and o.swizzle in _SWIZZLE_MODE:
                takes_it = jax_source.layout_inference_takes_swizzle_only()
                if takes_it is None:
                    return
                if takes_it:
                    # JAX 0.12: layout inference takes the swizzle but finds no tiling that goes
                    # with it for WGMMA (checked for swizzles 32/64/128, f16/bf16/fp8, either side).
                    side = "lhs" if o is opa else "rhs"
                    self._report(wgmma_operand_transforms.RULE,
                                 f"WGMMA {side} is swizzled but not tiled: {layout_failure()}",
                                 kernel_level=True, span=self._operand_span(o),
                                 data={"jax_message": layout_failure()})
                    return
                self._report(wgmma_operand_transforms.RULE,
                             f"Unsupported transforms [<SwizzlingMode.{_SWIZZLE_MODE[o.swizzle]}: {o.swizzle}>]",
                             kernel_level=True, span=self._operand_span(o))
                return
        if matches(">=0.12") and any(o.own == ("tiling",) for o in ops) and self._tiling_only_fails(ops, opb):
            return
        if not all(o.tiled_swizzled for o in ops):
            return  # inferred transforms: which swizzle layout inference picks is not modelled
        # Both operands carry explicit tiling + swizzle: layout inference must satisfy them.
        for o in ops:
            itemsize = ITEMSIZE.get(o.ref.dtype.name)  # type: ignore[union-attr]
            if itemsize is None:
                return
            if o.tiling != (8, o.swizzle // itemsize):  # type: ignore[operator]
                side = "lhs" if o is opa else "rhs"
                self._report(wgmma_tiling_swizzle_fit.RULE,
                             f"WGMMA {side} tiling {o.tiling} does not fit its swizzle {o.swizzle} "
                             f"(expected (8, {o.swizzle // itemsize})): {layout_failure()}",  # type: ignore[operator]
                             kernel_level=True, span=self._operand_span(o),
                             data={"jax_message": layout_failure()})
                return
        if opa is not None and opa.swizzle != opb.swizzle:
            self._report(wgmma_swizzle_mismatch.RULE,
                         f"WGMMA lhs and rhs swizzles differ ({opa.swizzle} and {opb.swizzle}): {layout_failure()}",
                         kernel_level=True, span=self.call.span_of(2, "b"),
                         data={"lhs_swizzle": opa.swizzle, "rhs_swizzle": opb.swizzle,
                               "jax_message": layout_failure()})
            return
        # The mosaic_gpu.wgmma verifier: operand element types, then accumulator rows.
        elem = opb.ref.dtype.name  # type: ignore[union-attr]
        if elem not in WGMMA_TYPES and elem in MLIR:
            if opa is not None and not opa.has_view and opa.ref.shape is not None \
                    and _known_dims(*opa.ref.shape) and len(opa.ref.shape) == 2:
                from wgmma_lsp.rules import wgmma_element_type

                m_a, k_a = opa.ref.shape
                # The verifier prints the lhs's memref type: a pallas_call block is a strided view,
                # a run_scoped (or plgpu.kernel scratch) buffer a plain one (JAX 0.10 and 0.12;
                # fixture lowering_kernel/wgmma_element_type_int32_scratch_warpgroup.py).
                desc = opa.ref.root().origin_desc
                if desc.startswith(("pallas_call input", "pallas_call output")):
                    layout = f"strided<[{k_a}, 1], offset: ?>, "
                elif desc.startswith("run_scoped"):
                    layout = ""
                else:
                    return  # another buffer: its memref type is not modelled
                memref = f"memref<{m_a}x{k_a}x{MLIR[elem]}, {layout}#gpu.address_space<workgroup>>"
                self._report(wgmma_element_type.RULE,
                             f"WGMMA does not support element type {MLIR[elem]}: {wgmma_element_type.VERIFIER} "
                             f"but got '{memref}'", span=self.call.span_of(1, "a"), data={"elem": elem})
            return
        m = self.acc.shape[0] if self.acc.shape else None
        if isinstance(m, int) and m % 64:
            self._report(accumulator_tile_shape.RULE,
                         f"'mosaic_gpu.wgmma' op The accumulator's first dimension must be a multiple of 64, "
                         f"but got {m}.", span=self.call.span_of(0, "acc"))
            return
        self._mosaic_wgmma(opb, kernel_level=True)

    def _tiling_only_fails(self, ops: list[Operand], opb: Operand) -> bool:
        """JAX 0.12, Warpgroup: an operand tiled but not swizzled. Its `with_transforms` assigns
        it `SMEMTransforms(tiling, swizzle=None)`, and the WGMMA's constraints (`mma_tiling_constraint`
        on the rhs, the lhs equal to the rhs) admit only swizzles 32, 64 and 128: layout inference
        fails, whatever the tiling. Claimed only when nothing else fails first: no views, each
        tiling divides its buffer, and some candidate tiling (8, 32 bytes) divides the rhs
        (else "No valid tiling found"). Reported when proven; True if it was (fixture
        lowering_kernel/kernel_level_wgmma_tiling_only_warpgroup.py; JAX 0.10 accepts these)."""
        from wgmma_lsp.rules import wgmma_operand_transforms

        if any(o.has_view or o.slot_view or o.ref.shape is None or len(o.ref.shape) != 2
               or not _known_dims(*o.ref.shape) for o in ops):
            return False
        for o in ops:
            size = ITEMSIZE.get(o.ref.dtype.name)  # type: ignore[union-attr]
            if o.tiling is not None and (len(o.tiling) != 2 or any(t <= 0 or s % t for s, t in zip(o.ref.shape, o.tiling))):
                return False
            if o.own not in (("tiling",), ()) and not (o.tiled_swizzled and size is not None
                                                       and o.tiling == (8, o.swizzle // size)):  # type: ignore[operator]
                return False  # its own with_transforms may fail first
        itemsize = ITEMSIZE.get(opb.ref.dtype.name)  # type: ignore[union-attr]
        rows, cols = opb.ref.shape  # type: ignore[misc]
        if itemsize is None or rows % 8 or cols % (32 // itemsize):
            return False
        o = next(o for o in ops if o.own == ("tiling",))
        side = "lhs" if o is not opb else "rhs"
        self._report(wgmma_operand_transforms.RULE, f"WGMMA {side} is tiled but not swizzled: {layout_failure()}",
                     kernel_level=True, span=self._operand_span(o), data={"jax_message": layout_failure()})
        return True

    def _verifier_accumulator_type(self, b: Value) -> bool:
        """The `mosaic_gpu.wgmma` op's verifier checks the accumulator's type (operand #0) as
        the op is built, before layout inference and before any check of the operands: a
        bfloat16 accumulator fails it whatever the operands' dtypes and transforms (checked
        against JAX 0.10 and 0.12, Warpgroup: f16, bf16, f32, fp8 and int8 operands, with and
        without transforms; a rhs seen through a reshape — tokamax's GLU collapses its minor
        dims — fails it too). The rhs (`b`): an SMEM ref whose transforms are all known. JAX
        blames the `wgmma` line. Reported when proven; True if it was."""
        if T.concrete(self.acc.dtype) is None or self.acc.dtype.name != "bfloat16":
            return False
        if not isinstance(b, RefVal) or b.kind != "plain" or lowered_space(b.root()) != "smem" \
                or any(t.kind not in _KNOWN_VIEWS or not t.params for t in b.transforms):
            return False
        elem = b.dtype.name if T.concrete(b.dtype) is not None else None  # type: ignore[union-attr]
        shape = self.acc.shape
        if elem not in MLIR or elem == "uint8" or not shape or len(shape) != 2 or not _known_dims(*shape):
            return False
        allowed = _allowed_acc(elem) if elem in WGMMA_TYPES else None
        if allowed is None:
            return False
        self._acc_dtype_error(elem, "bfloat16", allowed, kernel_level=False)
        return True

    def _operand_span(self, o: Operand):
        return self.call.span_of(1, "a") if o.ref is self.a else self.call.span_of(2, "b")

    # -- mosaic/gpu/wgmma.py: wgmma ------------------------------------------------------
    def _mosaic_wgmma(self, opb: Operand, kernel_level: bool) -> None:
        from wgmma_lsp.rules import (
            wgmma_accumulator_dtype_hw, wgmma_k_swizzle, wgmma_lhs_register_dtype, wgmma_n_size,
            wgmma_transpose_16bit,
        )

        a, acc = self.a, self.acc
        elem = opb.ref.dtype.name  # type: ignore[union-attr]
        # A symbolic dtype (`x.dtype`) is no fact: its name is in none of the tables below.
        acc_dtype = acc.dtype.name if T.concrete(acc.dtype) is not None else None
        swizzle = opb.swizzle
        if acc_dtype is None or elem not in MLIR or swizzle is None:
            return
        a_in_regs = isinstance(a, ArrayVal)
        if a_in_regs:
            if T.concrete(a.dtype) is None:  # type: ignore[union-attr]
                return
            if a.dtype.name not in REGISTER_TYPES:  # type: ignore[union-attr]
                if a.dtype.name not in MLIR:  # type: ignore[union-attr]
                    return
                self._report(wgmma_lhs_register_dtype.RULE,
                             "Only f16, bf16, i8, f8e5m2, f8e4m3fn are supported for A in registers, "
                             f"got {MLIR[a.dtype.name]}", kernel_level=kernel_level,  # type: ignore[union-attr]
                             span=self.call.span_of(1, "a"))
                return
            if MLIR[a.dtype.name] == "i8" and swizzle == 32:  # type: ignore[union-attr]
                return  # NotImplementedError("swizzle=32 not supported for s8 lhs in registers")
        # Accumulator dtype per element type; other element types are not supported at all.
        if elem not in WGMMA_TYPES:
            from wgmma_lsp.rules import wgmma_element_type

            self._report(wgmma_element_type.RULE, f"Unsupported element type: {MLIR[elem]}",
                         kernel_level=kernel_level, data={"elem": elem})
            return
        if elem in ("uint8",) or (a_in_regs and a.dtype.name == "uint8"):  # type: ignore[union-attr]
            return  # u8: lhs-in-registers error / silently s8
        allowed = _allowed_acc(elem)
        if acc_dtype not in allowed:
            self._acc_dtype_error(elem, acc_dtype, allowed, kernel_level)
            return
        if acc_dtype == "uint32":
            return
        # Instruction shape: N (one group), K (one swizzle atom per group).
        # (the view's shape: `(K, N)` also when a transpose views an `(N, K)` buffer, as
        # `mma_utils.tiled_memref_shape` reads the lowering's transposed memref)
        k, n = opb.ref.shape or (None, None)
        if opb.ref.shape is None or not _known_dims(k, n):
            return
        if n > 256 or n % 8:  # type: ignore[operator]
            self._report(wgmma_n_size.RULE, f"N must be a multiple of 8 and <= 256, got: {n}",
                         kernel_level=kernel_level, data={"n": n})
            return
        m = acc.shape[0] if acc.shape else None
        if not isinstance(m, int) or m % 64:
            return
        k_group = swizzle // ITEMSIZE[elem]
        if k % k_group:  # type: ignore[operator]
            self._report(wgmma_k_swizzle.RULE, f"K must be a multiple of {k_group}, got: {k}",
                         kernel_level=kernel_level, data={"k": k, "k_group": k_group})
            return
        if a_in_regs:
            from wgmma_lsp.models.array_constructors import SPLAT
            from wgmma_lsp.rules import wgmma_lhs_register_layout as rule

            if self.sem == "lane" and a.layout == SPLAT:  # type: ignore[union-attr]
                # Step 4 of wgmma.py: wgmma_fence on a splat array (optimization_barrier).
                mlir = MLIR[a.dtype.name]  # type: ignore[union-attr]
                self._report(rule.RULE, rule.MESSAGE.format(mlir=mlir), span=self.call.span_of(1, "a"),
                             data={"value_span": self.call.span_of(1, "a"),
                                   "plgpu": module_alias(self.interp, "plgpu")})
            elif self.sem == "lane" and self._loaded_from_untransformed_ref():
                self._report(rule.RULE, rule.strided_message(), span=self.call.span_of(1, "a"))
            return  # other register-layout checks come first (not modelled)
        # wgmma_m64: only 16-bit types support transposed (MN-major) operands.
        opa = operand(a)
        if opa is None:
            return
        b_transpose = not opb.transposed  # a row-major (K, N) rhs is N-major
        if ITEMSIZE[elem] != 2 and (opa.transposed or b_transpose):
            self._report(wgmma_transpose_16bit.RULE, "Only f16 WGMMA supports transposes",
                         kernel_level=kernel_level,
                         span=self.call.span_of(1, "a") if opa.transposed else self.call.span_of(2, "b"),
                         data={"lhs_transposed": opa.transposed, "rhs_transposed": b_transpose})

    def _loaded_from_untransformed_ref(self) -> bool:
        """The lhs is `ref[...]` of a whole SMEM ref without transforms: Lane loads it with a
        strided register layout."""
        import ast

        from wgmma_lsp.models.indexing import is_trivial_index

        node = self.call.node_of(1, "a")
        if not isinstance(node, ast.Subscript):
            return False
        from wgmma_lsp.interpret.values import Const

        refs = self.interp.recorded(node.value)
        if isinstance(node.slice, ast.Constant) and node.slice.value is Ellipsis:
            index: list = [Const(...)]
        else:
            index = self.interp.recorded(node.slice)
        if not refs or len(index) != 1:
            return False
        for r in refs:
            if not isinstance(r, RefVal) or r.kind != "plain" or r.base is not None or lowered_space(r) != "smem" \
                    or r.transforms or is_trivial_index(index[0], r.shape) is not True:
                return False
        return True

    def _acc_dtype_error(self, elem: str, acc_dtype: str, allowed: tuple[str, ...], kernel_level: bool) -> None:
        from wgmma_lsp.rules import wgmma_accumulator_dtype_hw as rule

        acc_mlir = MLIR.get(acc_dtype)
        if acc_mlir is None:
            return
        names = {"float32": "f32", "float16": "f32 or f16", "int8": "s32"}
        kind = "float32" if elem in ("float32", "bfloat16") else ("int8" if elem == "int8" else "float16")
        message = (f"WGMMA with element type {MLIR[elem]} only supports accumulators of type {names[kind]}, "
                   f"but got: {acc_mlir}")
        root = self.acc.root()
        data = {"alloc_span": root.origin, "acc_dtype": acc_dtype, "elem": elem,
                "needed": "int32" if elem == "int8" else "float32", "jnp": jnp_alias(self.interp)}
        if self.sem == "warpgroup" and acc_dtype == "bfloat16":
            # The op verifier rejects the accumulator vector type first (at the wgmma line); an
            # int32 accumulator passes it and fails in wgmma.py (kernel level) like the rest.
            shape = "x".join(str(d) for d in (self.acc.shape or ()))
            jax_text = (f"'mosaic_gpu.wgmma' op operand #0 must be vector of A type supported by "
                        f"the accumulator `wgmma.mma_async` instruction values of ranks 2, but got "
                        f"'vector<{shape}x{acc_mlir}>'")
            data["jax_message"] = jax_text  # what JAX raises; the diagnostic explains it
            self._report(rule.RULE, f"{message}: {jax_text}", span=self.call.span_of(0, "acc"), data=data)
            return
        if self.sem == "warpgroup" and kind == "int8":
            if acc_dtype not in ("float32", "float16", "bfloat16"):
                return
            message = (f"{message} (JAX, Warpgroup semantics: is_signed must be non-None if and only if the "
                       f"MLIR type is an integer type, got _is_signed=True for {acc_mlir})")
        self._report(rule.RULE, message, kernel_level=kernel_level, span=self.call.span_of(0, "acc"), data=data)

    def _fix_data(self, op: Operand, other: Value, side: str) -> dict:
        """What the add-transforms fix needs: the swizzle find_swizzle picks for the minor dim
        (the other operand's swizzle when it has one: they must match)."""

        dtype = op.ref.dtype.name  # type: ignore[union-attr]
        itemsize = ITEMSIZE.get(dtype)
        shape = op.ref.root().shape
        other_op = operand(other) if isinstance(other, RefVal) else None
        swizzle = None
        if other_op is not None and other_op.tiled_swizzled:
            swizzle = other_op.swizzle
        elif itemsize is not None and shape and isinstance(shape[-1], int):
            swizzle = find_swizzle(shape[-1] * itemsize * 8)
        return {"side": side, "swizzle": swizzle, "itemsize": itemsize,
                "spec_span": op.ref.root().spec_span, "plgpu": module_alias(self.interp, "plgpu"),
                "jnp": jnp_alias(self.interp)}


LAYOUT_FAILURE = ("Failed to infer a possible set of layouts. This should only happen if user-provided "
                  "layout casts are unsatisfiable.")


def layout_failure() -> str:
    """Layout inference's generic failure as the installed JAX words it (0.12 adds how to dump
    the constraint system); JAX 0.10's words when the source cannot be read."""
    return jax_source.layout_failure_message() or LAYOUT_FAILURE


def _allowed_acc(elem: str) -> tuple[str, ...]:
    if elem in ("float32", "bfloat16"):
        return ("float32",)
    if elem == "int8":
        return ("int32", "uint32")  # uint32 is rejected at allocation (WG028)
    return ("float32", "float16")


def find_swizzle(minor_dim_bits: int) -> int | None:
    """`plgpu.find_swizzle` (pallas/mosaic_gpu/helpers.py): the largest swizzle (bytes) that
    divides the minor dimension; None where it raises."""
    for swizzle_bytes in (128, 64, 32, 16):
        if minor_dim_bits % (swizzle_bytes * 8) == 0:
            return swizzle_bytes
    return None



def check_wgmma_lowering(call: Call, acc: RefVal, a: Value, b: Value) -> None:
    WgmmaLowering(call, acc, a, b).check()


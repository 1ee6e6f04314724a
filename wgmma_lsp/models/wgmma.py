"""WGMMA on Hopper: `plgpu.wgmma`, accumulator loads and stores.

Mirrors, in JAX's order of checks:
- `jax._src.pallas.mosaic_gpu.primitives.wgmma` (shape and dtype checks, then the
  `wgmma_ref_p` abstract eval that requires a `WGMMAAbstractAccumulatorRef`);
- `wgmma_accumulator_load` / `wgmma_accumulator_store` and `_wgmma_accumulator_store_abstract_eval`;
- `WGMMAAbstractAccumulatorRef._getitem/_setitem` in `jax._src.pallas.mosaic_gpu.core`.
Each check stops at the first error, as JAX does; a check that cannot be decided stops silently.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, RefVal, Value, as_int
from wgmma_lsp.models.indexing import is_trivial_index
from wgmma_lsp.models.registry import model
from wgmma_lsp.models.shape_unpacking import unpacking_fails
from wgmma_lsp.models.user_spelling import allocated_here, module_alias
from wgmma_lsp.models.user_spelling import jnp_alias as _jnp_alias
from wgmma_lsp.models.wgmma_lowering import check_wgmma_lowering
from wgmma_lsp.rules import (
    accumulator_access_ref_type, accumulator_dtype, accumulator_shape, accumulator_store_index,
    wait_n_negative, wgmma_accumulator_ref_type, wgmma_mixed_dtypes, wgmma_shapes,
)
from wgmma_lsp.rules.base import Related


def _shape(v: Value) -> tuple | None:
    if isinstance(v, (RefVal, ArrayVal)):
        return v.shape
    return None


def _mix_allowed(da: object, db: object) -> bool:
    """Whether the installed `plgpu.wgmma` may accept operands of these two dtypes
    (jax_source.wgmma_mixable_dtypes; unknown: any pair of float8 types may be)."""
    from wgmma_lsp.interpret.jax_source import wgmma_mixable_dtypes

    names = (getattr(da, "name", str(da)), getattr(db, "name", str(db)))
    mixable = wgmma_mixable_dtypes()
    if mixable is None:
        return all(n.startswith("float8_") for n in names)
    return all(n in mixable for n in names)


def _known_aval(text: str) -> bool:
    return "?" not in text and "..." not in text



@model("plgpu.wgmma")
def _wgmma(call: Call) -> Value:
    """JAX checks the shapes, then the dtypes, then (in the primitive's abstract eval) the
    accumulator's ref type, and raises at the first that fails. A check proven to fail is
    reported when every earlier one passes or cannot be decided (the line raises either way);
    shapes that differ only symbolically give a warning naming the condition."""
    interp = call.interp
    acc, a, b = call.get(0, "acc"), call.get(1, "a"), call.get(2, "b")
    sa, sb, sacc = _shape(a), _shape(b), _shape(acc)
    if unpacking_fails(call, [sacc, sa, sb]):
        return Const(None)
    shapes: bool | None = None  # proven compatible / proven not / undecided
    condition = ""
    if sa is not None and sb is not None and sacc is not None:
        if len(sacc) != 2 or len(sa) != 2 or len(sb) != 2:
            unpacking_fails(call, [sacc, sa, sb])
            return Const(None)
        m, n = sacc
        m2, k = sa
        k2, n2 = sb
        pairs = [(m, m2), (n, n2), (k, k2)]
        checks = [D.equal(x, y) for x, y in pairs]
        shapes = False if False in checks else (None if None in checks else True)
        if shapes is False:
            msg = (f"Incompatible shapes for matrix multiplication: lhs={D.format_shape(sa)},"
                   f" rhs=b.shape={D.format_shape(sb)}, acc={D.format_shape(sacc)}")
            interp.report(wgmma_shapes.RULE, msg, call.span, call.line,
                          related=allocated_here(acc) if isinstance(acc, RefVal) else [],
                          data=_acc_shape_fix_data(acc, sa, sb))
            return Const(None)
        if shapes is None:
            condition = differs_unless(pairs)
    da = a.dtype if isinstance(a, (RefVal, ArrayVal)) else None
    db = b.dtype if isinstance(b, (RefVal, ArrayVal)) else None
    dtypes = T.same(da, db)  # undecided when either is unknown or symbolic (but not both `x.dtype`)
    if dtypes is False and _mix_allowed(da, db):
        dtypes = None  # this JAX accepts the pair (0.12: e4m3 x e5m2), or may: no error, no wgmma checks
    if dtypes is False:
        msg = f"Mixed input dtypes for matrix multiplication unsupported: lhs={da}, rhs={db}"
        interp.report(wgmma_mixed_dtypes.RULE, msg, call.span, call.line)
        return Const(None)
    if isinstance(acc, RefVal) and acc.root().kind == "acc":
        if shapes is True and dtypes is True:
            check_wgmma_lowering(call, acc, a, b)
        elif condition:
            _symbolic_shape_warning(call, sa, sb, sacc, condition)
        return Const(None)
    if isinstance(acc, RefVal):
        aval = acc.root().aval()
    elif isinstance(acc, ArrayVal):
        aval = acc.aval()
    else:
        if condition:
            _symbolic_shape_warning(call, sa, sb, sacc, condition)
        return Const(None)
    if not _known_aval(aval):
        return Const(None)
    data = {"arg_span": call.span_of(0, "acc")}
    related: list[Related] = []
    if isinstance(acc, RefVal):
        root = acc.root()
        related = allocated_here(acc)
        data.update(alloc_span=root.origin, alloc_desc=root.origin_desc, alloc_kind=root.space)
    interp.report(wgmma_accumulator_ref_type.RULE, f"Expected WGMMAAbstractAccumulatorRef got {aval}",
                  call.span_of(0, "acc"), call.line, related=related, data=data)
    return Const(None)


def differs_unless(pairs: list[tuple[D.Dim, D.Dim]]) -> str:
    """`tile_m == tile_n` for sizes that differ only symbolically; "" when a size is unknown."""
    conds = []
    for x, y in pairs:
        e = D.equal(x, y)
        if e is True:
            continue
        if e is False or x is None or y is None or isinstance(x, int) or isinstance(y, int):
            return ""  # unknown, or a name against a number: too common in generic code to warn
        text = " == ".join(sorted((str(x), str(y))))
        if text not in conds:
            conds.append(text)
    return " and ".join(conds)


def _acc_shape_fix_data(acc: Value, sa: tuple, sb: tuple) -> dict:
    """For the WG005 fix: the `plgpu.ACC(...)` allocation and the (M, N) the operands need, when
    only the accumulator disagrees with operands that chain (lhs K == rhs K)."""
    if not isinstance(acc, RefVal) or acc.base is not None or acc.kind != "acc" or acc.origin is None:
        return {}
    m, k = sa
    k2, n = sb
    if not all(isinstance(d, int) for d in (m, k, k2, n)) or k != k2:
        return {}
    return {"alloc_span": acc.origin, "needed_shape": (m, n)}


def _symbolic_shape_warning(call: Call, sa: tuple, sb: tuple, sacc: tuple, condition: str) -> None:
    msg = (f"Incompatible shapes for matrix multiplication: lhs={D.format_shape(sa)},"
           f" rhs=b.shape={D.format_shape(sb)}, acc={D.format_shape(sacc)}")
    acc = call.get(0, "acc")
    call.interp.report(wgmma_shapes.RULE, msg, call.span, call.line,
                       related=allocated_here(acc) if isinstance(acc, RefVal) else [],
                       condition=condition)


def _access_check(call: Call, acc: Value, prefix: str) -> bool:
    """The wrappers' `isinstance(acc.aval, WGMMAAbstractAccumulatorRef)` check; True if it passes."""
    if isinstance(acc, RefVal) and acc.base is None:
        if acc.kind == "acc":
            return True
        aval = acc.aval()
        if _known_aval(aval):
            root = acc.root()
            call.interp.report(
                accumulator_access_ref_type.RULE,
                f"acc must be a WGMMAAccumulatorAbstractRef, got {prefix}.aval={aval}",
                call.span_of(0, prefix), call.line, related=allocated_here(acc),
                data={"arg_span": call.span_of(0, prefix), "alloc_span": root.origin,
                      "alloc_kind": root.space})
        return False
    return False


@model("plgpu.wgmma_accumulator_load")
def _load(call: Call) -> Value:
    wait_n = call.get(99, "wait_n", Const(0))
    n = as_int(wait_n)
    if n is not None and n < 0:
        call.interp.report(wait_n_negative.RULE, f"wait_n must be non-negative, got wait_n={n}",
                           call.span_of(99, "wait_n"), call.line)
        return UNKNOWN
    if not (isinstance(wait_n, Const) and (wait_n.value is None or n is not None)):
        return UNKNOWN
    acc = call.get(0, "acc")
    if _access_check(call, acc, "acc"):
        assert isinstance(acc, RefVal)
        return acc.inner
    return UNKNOWN


@model("plgpu.wgmma_accumulator_store")
def _store(call: Call) -> Value:
    acc = call.get(0, "acc_ref")
    if _access_check(call, acc, "acc_ref"):
        assert isinstance(acc, RefVal)
        check_store(call.interp, acc, call.get(1, "val"), call.node_of(1, "val"), call.line,
                    call.node_of(0, "acc_ref"))
    return Const(None)


def accumulator_setitem(interp, ref: RefVal, index: Value, value: Value, target: ast.Subscript,
                        value_node: ast.AST | None, aug: bool) -> None:
    """`acc_ref[idx] = value` (core.WGMMAAbstractAccumulatorRef._setitem)."""
    if ref.base is not None:
        return  # stores through a view take another path in JAX
    trivial = is_trivial_index(index, ref.shape)
    blame = target.lineno - 1
    if trivial is False:
        interp.report(accumulator_store_index.RULE, accumulator_store_index.MESSAGE,
                      interp.span(target), blame, related=allocated_here(ref),
                      data={"target_span": interp.span(target), "base_span": interp.span(target.value),
                            "slice_span": interp.span(target.slice)})
        return
    if trivial is None:
        return
    check_store(interp, ref, value, value_node, blame, target.value)


def check_store(interp, ref: RefVal, value: Value, value_node: ast.AST | None, blame: int,
                ref_node: ast.AST | None) -> None:
    """`_wgmma_accumulator_store_abstract_eval`: the shape first, then the dtype."""
    val = value if isinstance(value, ArrayVal) else None
    if val is None:
        return
    inner = ref.inner
    span = interp.span(value_node) if value_node is not None else None
    ref_text = interp.lines.text(interp.span(ref_node)) if ref_node is not None else "acc_ref"
    eq = D.shapes_equal(inner.shape, val.shape)
    condition = ""
    if eq is None and inner.shape is not None and val.shape is not None \
            and len(inner.shape) == len(val.shape):
        condition = differs_unless(list(zip(inner.shape, val.shape)))
    if eq is False and inner.shape is not None and val.shape is not None \
            and D.is_known(inner.shape) and D.is_known(val.shape):
        interp.report(accumulator_shape.RULE,
                      f"Accumulator shape {D.format_shape(inner.shape)} does not match value shape "
                      f"{D.format_shape(val.shape)}", span, blame, related=allocated_here(ref),
                      data={"value_span": span, "acc_shape": inner.shape, "value_shape": val.shape,
                            "value_node": value_node, "ref_text": ref_text, "jnp": _jnp_alias(interp),
                            "operand_shapes": _operand_shapes(interp, value_node)})
        return
    same = T.same(inner.dtype, val.dtype)  # None: unknown, or symbolic (`x.dtype`) against another
    if eq is False or same is None or (eq is None and same):
        if condition and D.is_known(inner.shape) and D.is_known(val.shape):
            interp.report(accumulator_shape.RULE,
                          f"Accumulator shape {D.format_shape(inner.shape)} does not match value "
                          f"shape {D.format_shape(val.shape)}", span, blame,
                          related=allocated_here(ref), condition=condition)
        return
    if same:
        _check_store_layout(interp, val, span, blame)
        return
    # The dtype differs (both concrete): an error even when the shape check before it cannot be
    # decided.
    if same is False:
        interp.report(accumulator_dtype.RULE,
                      f"Accumulator dtype {inner.dtype} does not match value dtype {val.dtype}",
                      span, blame, related=allocated_here(ref),
                      data={"value_span": span, "acc_dtype": inner.dtype.name,
                            "value_dtype": val.dtype.name, "value_node": value_node,
                            "ref_text": ref_text, "jnp": _jnp_alias(interp),
                            "cast_receiver": _cast_receiver(interp, value_node, inner.dtype.name)})


def _check_store_layout(interp, val: ArrayVal, span, blame: int) -> None:
    """Lane lowering of the store: `WGMMAAccumulator.from_registers` needs the WGMMA layout."""
    from wgmma_lsp.models.array_constructors import SPLAT
    from wgmma_lsp.rules import accumulator_layout

    if interp.kernel.lowering == "lane" and val.layout == SPLAT:
        interp.report(accumulator_layout.RULE, accumulator_layout.MESSAGE, span, blame,
                      data={"value_span": span, "plgpu": module_alias(interp, "plgpu")})



def _recorded(interp, node: ast.AST) -> list[Value]:
    return interp.recorded(node)


def _cast_receiver(interp, node: ast.AST | None, acc_dtype: str):
    """For `x.astype(bf16)` whose `x` already has the accumulator dtype: x's span."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
        recv = node.func.value
        vals = _recorded(interp, recv)
        if vals and all(isinstance(v, ArrayVal) and v.dtype is not None and v.dtype.name == acc_dtype
                        for v in vals):
            return interp.span(recv)
    return None


def _operand_shapes(interp, node: ast.AST | None):
    """For `x.reshape(...)`, `x.T`, `x.transpose(...)`, `jnp.transpose(x)`: x's span and shape."""
    recv = None
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        recv = node.value
    elif isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("reshape", "transpose", "swapaxes"):
            recv = f.value
            vals = _recorded(interp, f.value)
            if not vals or not all(isinstance(v, ArrayVal) for v in vals):
                recv = node.args[0] if node.args and f.attr != "reshape" else recv
        if isinstance(f, ast.Attribute) and f.attr in ("reshape", "transpose", "swapaxes") and node.args \
                and isinstance(f.value, ast.Name) and any(
                    getattr(v, "name", "") == "jnp" for v in _recorded(interp, f.value)):
            recv = node.args[0]
    if recv is None:
        return None
    vals = _recorded(interp, recv)
    if vals and all(isinstance(v, ArrayVal) and v.shape is not None for v in vals):
        shapes = {v.shape for v in vals}  # type: ignore[union-attr]
        if len(shapes) == 1:
            return (interp.span(recv), shapes.pop())
    return None

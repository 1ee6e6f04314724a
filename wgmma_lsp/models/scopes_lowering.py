"""How `pl.run_scoped` allocations are lowered (`_run_scoped_lowering_rule` in
`jax/_src/pallas/mosaic_gpu/lowering.py`), in JAX 0.10's order of checks:

1. `collective_axes` other than the kernel's thread axis: "Only thread-collective allocations are
   supported in run_scoped." (WG030);
2. then, per allocation in order: a WGMMA accumulator must not be collective (WG029), must not
   have an unsigned dtype (WG028) and, under Lane semantics, must be (M % 64, N % 8)-shaped
   (WG010, `WGMMAAccumulator.zero`); any other allocation in a multi-threaded kernel must be
   thread-collective (WG030).

The same under both lowering semantics, except the accumulator shape (checked by the
`mosaic_gpu.wgmma` verifier under Warpgroup semantics, see models/wgmma_lowering.py).
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.values import AllocSpec, Const, TupleVal, Value


def _axes(v: Value) -> tuple[str, ...] | None:
    """`collective_axes` as JAX normalises it (a name becomes a 1-tuple); None if unknown."""
    if isinstance(v, Const):
        if v.value is None:
            return ()
        if isinstance(v.value, str):
            return (v.value,)
        return None
    if isinstance(v, TupleVal) and all(isinstance(x, Const) and isinstance(x.value, str) for x in v.items):
        return tuple(x.value for x in v.items)  # type: ignore[union-attr]
    return None


def check_run_scoped_lowering(call: Call, allocations: list[tuple[Value, object]], collective: Value) -> None:
    from wgmma_lsp.rules import (
        accumulator_collective, accumulator_tile_shape, accumulator_unsigned, run_scoped_collective,
    )

    interp = call.interp
    axes = _axes(collective)
    wg = interp.kernel.wg_axis
    if axes is None or wg == "?":
        return
    if axes and axes != (wg,):
        interp.report(run_scoped_collective.RULE, run_scoped_collective.NOT_THREAD_MESSAGE,
                      call.span_of(99, "collective_axes"), call.line, data={"axes": axes})
        return
    for spec, span in allocations:
        if not isinstance(spec, AllocSpec):
            return  # a pytree or unknown allocation: its order is not modelled
        if spec.kind == "acc":
            if axes:
                interp.report(accumulator_collective.RULE, accumulator_collective.MESSAGE,
                              spec.span or span, call.line,  # type: ignore[arg-type]
                              data={"collective_span": call.span_of(99, "collective_axes")})
                return
            dtype = spec.inner.dtype
            if dtype is None or dtype.symbolic:
                return
            if T.is_unsigned_integer(dtype):
                interp.report(accumulator_unsigned.RULE,
                              f"Invalid WGMMA accumulator dtype for s8/i8 WGMMA. Expected signed integer, "
                              f"but got {dtype.name}.", spec.span or span, call.line,  # type: ignore[arg-type]
                              data={"alloc_span": spec.span, "acc_dtype": dtype.name})
                return
            if interp.kernel.lowering == "lane":
                shape = spec.inner.shape
                if shape is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape):
                    return
                m, n = shape
                if m % 64 or n % 8:  # type: ignore[operator]
                    interp.report(accumulator_tile_shape.RULE,
                                  f"WGMMA requires m and n to be multiples of 64 and 8, got {m} and {n}",
                                  spec.span or span, call.line, data={"m": m, "n": n})  # type: ignore[arg-type]
                    return
            continue
        if spec.kind in ("smem", "barrier") and wg is not None and axes != (wg,):
            interp.report(run_scoped_collective.RULE,
                          "Only thread-collective allocations are supported in multithreaded kernels. "
                          f"Hint: add collective_axes={wg} to your run_scoped if you intend all threads to "
                          f"share the same allocation (currently collective_axes={axes}).",
                          spec.span or span, call.line, data={"axes": axes})  # type: ignore[arg-type]
            return

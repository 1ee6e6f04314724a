"""Mosaic GPU transforms applied to an allocation's type: tiling, then swizzle.

Mirrors (jax 0.10.2) `TilingTransform.transform_type` (a bare `assert` that the tile divides the
tiled dimensions) and `SwizzleTransform.transform_type` (the minor dimension of the tiled
shape must be exactly one swizzle span) in jax/_src/pallas/mosaic_gpu/core.py, run when
`pl.run_scoped` or `plgpu.kernel` allocates `plgpu.SMEM(shape, dtype, transforms=...)`.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import AllocSpec
from wgmma_lsp.models.pipeline_checks import span_on_line
from wgmma_lsp.rules import swizzle_trailing_dim, tiling_divides
from wgmma_lsp.rules.base import Related


def transforms_apply(call: Call, spec: AllocSpec) -> bool:
    """True when the transforms apply (or it cannot be decided); False when JAX raises here."""
    shape, dtype = spec.inner.shape, spec.inner.dtype
    if shape is None or T.concrete(dtype) is None or not all(isinstance(d, int) for d in shape):
        return True
    cur: tuple[int, ...] = tuple(shape)  # type: ignore[arg-type]
    span = span_on_line(call, spec.span)
    related = [Related(spec.span, f"allocated here as {spec.describe()}")] \
        if spec.span is not None and span != spec.span else []
    for t in spec.transforms:
        if t.kind == "tiling":
            tiling = tuple(t.params)
            if not tiling or len(tiling) > len(cur) or not all(isinstance(x, int) and x > 0 for x in tiling):
                return True
            tiled = cur[-len(tiling):]
            bad = [(d, x) for d, x in zip(tiled, tiling) if d % x]
            if bad:
                d, x = bad[0]
                call.interp.report(
                    tiling_divides.RULE,
                    f"TilingTransform({D.format_shape(tiling)}) does not divide the "
                    f"{D.format_shape(tuple(cur))} buffer: dimension {d} is not a multiple of {x} "
                    f"(JAX: AssertionError from `{tiling_divides.RULE.template}`)",
                    span, call.line, related=related, data={"shape": cur, "tiling": tiling})
                return False
            cur = (*cur[:-len(tiling)], *(d // x for d, x in zip(tiled, tiling)), *tiling)
        elif t.kind == "swizzle":
            swizzle = t.params[0] if t.params else None
            if not isinstance(swizzle, int) or swizzle not in (32, 64, 128) or not cur:
                return True
            elems = swizzle * 8 // T.itemsize_bits(dtype)
            if elems != cur[-1]:
                call.interp.report(
                    swizzle_trailing_dim.RULE,
                    f"Swizzle {swizzle} requires the trailing dimension to be of size {elems}, but got "
                    f"shape: {D.format_shape(cur)}", span, call.line, related=related,
                    data={"swizzle": swizzle, "elems": elems})
                return False
        else:
            return True
    return True

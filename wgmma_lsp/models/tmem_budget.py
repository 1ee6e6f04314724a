"""How many TMEM columns a kernel allocates, as Mosaic GPU's resource estimate counts them.

Mirrors (jax 0.10.2) `jax/_src/pallas/mosaic_gpu/lowering.py`: `_run_scoped_resource_estimator`
adds up the allocations of one `pl.run_scoped` (each `Resources` rounds TMEM columns up to a
multiple of 8) plus what its body needs; `_estimate_resources` takes the maximum over sequential
scopes (`Resources.or_`); the kernel then allocates all of it at once, rounded up to a power of
two of at least 32 columns (`tcgen05.tmem_alloc_exact_ncols(..., exact=False)`), at most 512.
So the count is the largest sum of TMEM allocations live at the same time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import AllocSpec, RefVal, TupleVal, Value
from wgmma_lsp.models import smem_budget
from wgmma_lsp.rules import tmem_collective_mixed, tmem_columns
from wgmma_lsp.rules.base import kernel_level_note

TMEM_ROWS = 128
# JAX 0.12.1 allows 576 (one exclusive allocation) on sm_107f only; lowered with no GPU, as here,
# it assumes sm_90 (mosaic/gpu/utils.py `_infer_arch`) and the limit is 512 (tcgen05.py).
MAX_COLS = 512


@dataclass
class Budget:
    """TMEM columns live and at peak."""
    live: int = 0
    peak: int = 0
    known: bool = True
    collective: set = field(default_factory=set)
    # The collective flags of the allocations proven to be made (whatever their columns)
    kinds: set = field(default_factory=set)


def _align8(n: int) -> int:
    return (n + 7) // 8 * 8


def _cols(shape, dtype, attrs: dict) -> int | None:
    """Columns of one TMEM allocation with the default layout (128 rows; packed 16-bit values
    share a column)."""
    if shape is None or T.concrete(dtype) is None or len(shape) != 2 or not all(isinstance(d, int) for d in shape):
        return None
    if shape[0] != TMEM_ROWS or attrs.get("layout") is not False:
        return None
    packed = attrs.get("packed")
    bits = T.itemsize_bits(dtype)
    if packed is None and bits != 32:
        return None
    packing = 32 // bits if packed else 1
    if packing < 1 or shape[1] % packing:
        return None
    return shape[1] // packing


def _budget(interp) -> Budget | None:
    stack = getattr(interp, "_tmem_budgets", None)
    return stack[-1] if stack else None


def _add(interp, items: list[tuple[tuple | None, object, dict]]) -> int:
    """Allocations becoming live together; returns the columns added (to release later)."""
    budget = _budget(interp)
    if budget is None or not items:
        return 0
    smem_budget.not_replayable(interp)  # a replay elsewhere would not add these columns
    total = 0
    for shape, dtype, attrs in items:
        if attrs.get("collective") is not None and interp.certain:
            budget.kinds.add(attrs["collective"])
        cols = _cols(shape, dtype, attrs)
        if cols is None or attrs.get("collective") is None or not interp.certain:
            budget.known = False
            continue
        budget.collective.add(attrs["collective"])
        total += _align8(cols)
    budget.live += total
    budget.peak = max(budget.peak, budget.live)
    return total


def scope_enter(interp, specs: list[Value]) -> int:
    """`pl.run_scoped` allocating `specs`: their TMEM columns are live until `scope_exit`."""
    items = [(s.inner.shape, s.inner.dtype, dict(s.attrs)) for s in specs
             if isinstance(s, AllocSpec) and s.kind == "tmem"]
    return _add(interp, items)


def scope_exit(interp, cols: int) -> None:
    budget = _budget(interp)
    if budget is not None:
        budget.live -= cols


def _tmem_refs(v: Value, out: list[RefVal]) -> None:
    if isinstance(v, RefVal) and v.kind == "tmem" and v.base is None:
        out.append(v)
    elif isinstance(v, TupleVal):
        for x in v.items:
            _tmem_refs(x, out)


def kernel_enter(interp, refs: list[Value]) -> None:
    """A kernel starts: its scratch TMEM refs are live throughout."""
    stack = getattr(interp, "_tmem_budgets", None)
    if stack is None:
        stack = interp._tmem_budgets = []
    stack.append(Budget())
    scratch: list[RefVal] = []
    for r in refs:
        _tmem_refs(r, scratch)
    _add(interp, [(r.shape, r.dtype, dict(r.root().attrs)) for r in scratch])


def kernel_pop(interp) -> None:
    """The kernel is done (or its analysis was cut short)."""
    stack = getattr(interp, "_tmem_budgets", None)
    if stack:
        stack.pop()


def kernel_exit(interp, span, line: int) -> None:
    """The kernel's body has been interpreted: report when its TMEM cannot be allocated."""
    budget = _budget(interp)
    if budget is None:
        return
    # 0.12 allocates the kernel's TMEM the same way under both semantics (docs/coverage.md, row 109).
    if interp.kernel.lowering not in ("lane", "warpgroup") or installed() is None \
            or installed()[:2] not in ((0, 10), (0, 12)):
        return
    if budget.kinds >= {True, False}:  # (checked before the columns are allocated)
        interp.report(tmem_collective_mixed.RULE, tmem_collective_mixed.MESSAGE, span, line,
                      related=[kernel_level_note(span)])
        return
    if not budget.known or budget.peak == 0 or len(budget.collective) != 1:
        return  # unknown allocations, or collective and non-collective mixed (another message)
    ncols = max(32, 1 << (budget.peak - 1).bit_length())
    if ncols > MAX_COLS:
        interp.report(tmem_columns.RULE,
                      f"After rounding up, got {ncols} columns, exceeding the limit of {MAX_COLS}",
                      span, line, related=[kernel_level_note(span)], data={"columns": budget.peak})

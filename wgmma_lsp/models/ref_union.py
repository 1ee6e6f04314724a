"""`plgpu.RefUnion(*groups)` (jax/_src/pallas/mosaic_gpu/core.py): groups of SMEM allocations
that share one buffer. The body gets the union, which unpacks into one tree of refs per group
(`flatten_ref_union`), each ref the member's shape and dtype (with its transforms). Its size is
that of the largest group, each member aligned to `SMEM_ALIGNMENT` (`_ref_group_size`).
A union of TMEM allocations (all collective or none, else JAX raises) is one TMEM allocation:
no shared memory of its own (its columns are not sized here). A union mixing memory spaces, or
with a member not known, gives no value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, AllocSpec, TupleVal, Value, tree_leaves
from wgmma_lsp.models.registry import model

SMEM_ALIGNMENT = 1024


@dataclass(frozen=True)
class RefUnionSpec(Value):
    """`plgpu.RefUnion(...)`: groups sharing one allocation."""
    groups: TupleVal  # one allocation tree per group
    num_bytes: int | None  # the union's size (None: a member's size is not known, or TMEM)
    space: str = "smem"  # "smem" or "tmem": the memory space of every member

    def describe(self) -> str:
        return f"plgpu.RefUnion({', '.join(g.describe() for g in self.groups.items)})"


def _group_bytes(group: Value) -> int | None:
    size = 0
    for leaf in tree_leaves(group, lambda x: True) or []:
        if not isinstance(leaf, AllocSpec) or leaf.inner.shape is None or leaf.inner.dtype is None \
                or leaf.inner.dtype.symbolic or not all(isinstance(d, int) for d in leaf.inner.shape):
            return None
        size += -size % SMEM_ALIGNMENT
        bits = math.prod(leaf.inner.shape) * T.itemsize_bits(leaf.inner.dtype)  # type: ignore[arg-type]
        if bits % 8:
            return None  # JAX raises: only byte-aligned shapes
        size += bits // 8
    return size


@model("plgpu.RefUnion")
def _ref_union(call: Call) -> Value:
    if not call.complete or call.kwargs or not call.args:
        return UNKNOWN
    kinds = set()
    for g in call.args:
        leaves = tree_leaves(g, lambda x: True)
        if not leaves or not all(isinstance(x, AllocSpec) and x.kind in ("smem", "tmem") for x in leaves):
            return UNKNOWN
        kinds |= {x.kind for x in leaves}  # type: ignore[union-attr]
    if kinds == {"tmem"}:
        collective = {dict(x.attrs).get("collective") for g in call.args  # type: ignore[union-attr]
                      for x in tree_leaves(g, lambda x: True) or []}
        if len(collective) != 1 or None in collective:
            return UNKNOWN  # mixed (JAX raises) or not known
        return RefUnionSpec(TupleVal(tuple(call.args)), None, "tmem")
    if kinds != {"smem"}:
        return UNKNOWN  # JAX raises: one memory space for all
    sizes = [_group_bytes(g) for g in call.args]
    return RefUnionSpec(TupleVal(tuple(call.args)),
                        max(sizes) if all(s is not None for s in sizes) else None)  # type: ignore[type-var]


def as_allocation(spec: RefUnionSpec) -> Value:
    """What the union allocates, for the shared-memory total: one int8 buffer of its size."""
    from wgmma_lsp.interpret.dtypes import DType
    from wgmma_lsp.interpret.values import ArrayVal

    if spec.num_bytes is None:
        return UNKNOWN
    return AllocSpec("smem", ArrayVal((spec.num_bytes,), DType("int8")))

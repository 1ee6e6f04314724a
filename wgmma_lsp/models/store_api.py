"""`plgpu.store(dst, value, *, optimized=True)` (JAX 0.12): a store through a ref, checked as JAX
checks it while tracing.

JAX's `store_p` abstract eval is `swap`'s (`_store_abstract_eval` calls
`state_primitives._swap_abstract_eval`), with the ref's own transforms and no indexer
(`get_ref_and_transforms(dst, None, "store")`): the checks and messages of `dst[...] = value`
(models/stores.py `check_swap`: shape, then dtype after the implicit casts; `Transforms: ()`). Only those
trace-time checks: `store_p` lowers otherwise than `swap`, so the lowering rules of `ref[...] = v`
are not applied, and the ref is still handed to code the analysis does not follow (as before
this model: the race analysis does not count the store as a write it understood). JAX 0.10 has no
`plgpu.store` (WG091 at the attribute).
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Const, RefVal, Value
from wgmma_lsp.models.registry import model
from wgmma_lsp.models.stores import check_swap


@model("plgpu.store")
def _store(call: Call) -> Value:
    dst, value = call.get(0, "dst"), call.get(1, "value")
    dst_node, value_node = call.node_of(0, "dst"), call.node_of(1, "value")
    if isinstance(dst, RefVal) and dst_node is not None and call.node is not None:
        check_swap(call.interp, dst, Const(Ellipsis), value, value_node, call.node.lineno - 1, dst_node,
                   call.node)
    call.interp.unknown_call(call)
    return Const(None)

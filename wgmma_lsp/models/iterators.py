"""`next`, `iter` and the itertools that kernels chain generators with (`itertools.chain`,
`itertools.pairwise`): over a generator (interpret/generators.py) or a known sequence. An
iterator over items already known is a generator object without a body (it is iterated once,
as in Python)."""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.generators import EXHAUSTED, GeneratorVal, next_item
from wgmma_lsp.interpret.values import UNKNOWN, TupleVal, Value
from wgmma_lsp.models.registry import model


@model("builtins.iter")
def _iter(call: Call) -> Value:
    """`iter(x)`: a generator is its own iterator; a known sequence gives an iterator over its
    items."""
    if len(call.args) != 1 or call.kwargs or not call.complete:
        return call.interp.unknown_call(call)
    x = call.args[0]
    if isinstance(x, GeneratorVal):
        return x
    items = call.interp.iter_items(x)
    return GeneratorVal(None, None, tuple(items)) if items is not None else UNKNOWN


@model("builtins.next")
def _next(call: Call) -> Value:
    """`next(it)` / `next(it, default)` of a generator or iterator: its next item."""
    if not 1 <= len(call.args) <= 2 or call.kwargs or not call.complete:
        return call.interp.unknown_call(call)
    it = call.args[0]
    if not isinstance(it, GeneratorVal):
        return UNKNOWN  # (a list is not an iterator: `next([1])` raises in Python)
    item = next_item(call.interp, it)
    if len(call.args) == 1:
        call.interp.next_item_given("exhausted" if item is EXHAUSTED else "unknown" if item is None else "item")
    if item is EXHAUSTED:
        return call.args[1] if len(call.args) == 2 else UNKNOWN  # (StopIteration: not followed)
    return item if item is not None else UNKNOWN


@model("itertools.chain")
def _chain(call: Call) -> Value:
    """`itertools.chain(*iterables)`: one iterator over all their items, in order."""
    if call.kwargs or not call.complete:
        return call.interp.unknown_call(call)
    out: list[Value] = []
    for a in call.args:
        items = call.interp.iter_items(a)
        if items is None:
            return UNKNOWN
        out.extend(items)
    return GeneratorVal(None, None, tuple(out))


@model("itertools.pairwise")
def _pairwise(call: Call) -> Value:
    """`itertools.pairwise(xs)`: the overlapping pairs of consecutive items."""
    if len(call.args) != 1 or call.kwargs or not call.complete:
        return call.interp.unknown_call(call)
    items = call.interp.iter_items(call.args[0])
    if items is None:
        return UNKNOWN
    return GeneratorVal(None, None, tuple(TupleVal((a, b)) for a, b in zip(items, items[1:])))

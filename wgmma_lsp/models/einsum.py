"""`jnp.einsum(subscripts, *operands, preferred_element_type=None, ...)`: the result's shape and
dtype (jax/_src/numpy/einsum.py), for explicit subscripts (`"qhd,qhd->hq"`, with `...`).

Each label takes its operand's dimension (all of one label's dimensions equal); `...` stands for
the dimensions no label names, broadcast across the operands; the output lists its labels (and
`...`) once each. The dtype is `preferred_element_type`, or the operands' `result_type`.
Anything else (implicit output, a label with two sizes, a shape not known) is not followed.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, Value
from wgmma_lsp.models.arrays import as_array, broadcast_shapes, promote_values, to_dtype
from wgmma_lsp.models.registry import model

_ELLIPSIS = "..."


def _labels(term: str, ndim: int) -> tuple[str, int, str] | None:
    """(labels before `...`, how many dimensions `...` takes, labels after) of one operand."""
    if term.count(_ELLIPSIS) > 1:
        return None
    pre, _, post = term.partition(_ELLIPSIS)
    if not (pre + post).isalpha() and (pre + post):
        return None
    n = ndim - len(pre) - len(post)
    if n < 0 or (n and _ELLIPSIS not in term):
        return None
    return pre, n, post


def einsum_shape(subscripts: str, shapes: list[tuple[Dim, ...]]) -> tuple[Dim, ...] | None:
    text = subscripts.replace(" ", "")
    if text.count("->") != 1:
        return None
    ins, out = text.split("->")
    terms = ins.split(",")
    if len(terms) != len(shapes):
        return None
    sizes: dict[str, Dim] = {}
    ellipses: list[tuple[Dim, ...]] = []
    for term, shape in zip(terms, shapes):
        found = _labels(term, len(shape))
        if found is None:
            return None
        pre, n, post = found
        ellipses.append(tuple(shape[len(pre):len(pre) + n]))
        for label, d in zip(pre + post, shape[:len(pre)] + shape[len(pre) + n:]):
            if label in sizes and D.equal(sizes[label], d) is not True:
                return None
            sizes.setdefault(label, d)
    if out.count(_ELLIPSIS) > 1:
        return None
    pre, _, post = out.partition(_ELLIPSIS)
    if len(set(pre + post)) != len(pre + post) or any(c not in sizes for c in pre + post):
        return None
    middle: tuple[Dim, ...] = ()
    if _ELLIPSIS in out:
        b = broadcast_shapes(*ellipses)
        if b is None or any(d is None for d in b):
            return None
        middle = b
    elif any(ellipses):
        return None  # dimensions `...` took, summed away: not followed
    return tuple(sizes[c] for c in pre) + middle + tuple(sizes[c] for c in post)


@model("jnp.einsum")
def _einsum(call: Call) -> Value:
    spec = call.get(0, "subscripts")
    if not call.complete or not isinstance(spec, Const) or not isinstance(spec.value, str):
        return UNKNOWN
    operands = [as_array(a) for a in call.args[1:]]
    if not operands or any(o is None or o.shape is None for o in operands):
        return UNKNOWN
    shape = einsum_shape(spec.value, [o.shape for o in operands])  # type: ignore[union-attr,misc]
    if shape is None:
        return UNKNOWN
    pet = call.kwargs.get("preferred_element_type", Const(None))
    if isinstance(pet, Const) and pet.value is None:
        dtype = promote_values(*call.args[1:])
    else:
        dtype = to_dtype(pet)
    return ArrayVal(shape, dtype)

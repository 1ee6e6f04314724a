"""`einshape` (the einshape package, a DSL for reshape/transpose/broadcast; tokamax folds
attention heads with it): the array `einshape(equation, value, **index_sizes)` returns, computed
as its engine does (einshape/src/engine.py `generate_ops`): the left side's groups (`(hg)`,
`1` for a dimension of size 1, `...` for the dimensions left over, expanded to `A`, `B`, ...)
name the input's dimensions; an index whose size is not given is the dimension divided by the
sizes given in its group; the right side regroups them (its indices not on the left are
broadcast, their sizes given). The dtype is the input's (reshape, transpose and broadcast keep
it). Where the engine raises (a bad equation, a rank or size that does not fit), nothing is
claimed.

A group's size is the product of its indices' sizes; where that is symbolic and the same
indices formed a group on the left, it is that input dimension (the engine's own rule for
sizes it cannot compute; with JAX's concrete shapes the two are the same number).
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, Value, as_dim
from wgmma_lsp.models.registry import model

#: `_UPPERCASE` (the engine's names for the dimensions `...` stands for), written
#: out: importing `string` (its `Template` compiles a pattern) cost every check ~0.5 ms.
_UPPERCASE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Raises(ValueError):
    """The engine raises ValueError here."""


def _groups(expr: str) -> list[str]:
    """`_group_dimensions`: 'n(hg)1...' is ['n', 'hg', '', '...']."""
    groups: list[str] = []
    i = 0
    while i < len(expr):
        if expr[i].isalpha():
            groups.append(expr[i])
            i += 1
        elif expr[i] == "1":
            groups.append("")
            i += 1
        elif expr[i] == "(":
            i += 1
            begin = i
            while i < len(expr) and expr[i].isalpha():
                i += 1
            if not (i < len(expr) and expr[i] == ")"):
                raise _Raises("Unclosed parenthesis")
            groups.append(expr[begin:i])
            i += 1
        elif expr[i:].startswith("..."):
            i += 3
            if "..." in groups:
                raise _Raises("one wildcard")
            groups.append("...")
        else:
            raise _Raises("Illegal character")
    return groups


def _product(sizes: list[D.Dim]) -> D.Dim:
    out: D.Dim = 1
    for s in sizes:
        out = D.mul(out, s)
    return out


def output_shape(equation: str, shape: tuple[D.Dim, ...], sizes: dict[str, D.Dim]) -> tuple[D.Dim, ...]:
    """The output shape, or _Raises where the engine raises (or a check it makes on concrete
    sizes cannot be decided)."""
    if equation != equation.lower():
        raise _Raises("upper-case indices")
    sides = equation.split("->")
    if len(sides) != 2:
        raise _Raises("one ->")
    lhs, rhs = sides
    lhs_groups = _groups(lhs)
    if "..." in lhs_groups:
        wild = len(shape) - (len(lhs_groups) - 1)
        if wild < 0 or wild > len(_UPPERCASE):
            raise _Raises("rank")
        lhs = lhs.replace("...", _UPPERCASE[:wild])
        rhs = rhs.replace("...", _UPPERCASE[:wild])
        lhs_groups = _groups(lhs)
    elif len(shape) != len(lhs_groups):
        raise _Raises("rank")
    inferred: dict[str, D.Dim] = dict(sizes)
    for j, group in enumerate(lhs_groups):
        known = _product([sizes[a] for a in group if a in sizes])
        unknown = [a for a in group if a not in sizes]
        if len(unknown) > 1:
            raise _Raises("two unspecified")
        if unknown:
            if isinstance(shape[j], int) and isinstance(known, int) and (known == 0 or shape[j] % known):
                raise _Raises("not divisible")
            inferred[unknown[0]] = D.floordiv(shape[j], known) if known != 1 else shape[j]
        elif D.equal(shape[j], known) is not True:
            raise _Raises("incompatible")  # (JAX raises when it is not; when undecided: not claimed)
    ungrouped = "".join(lhs_groups)
    transposed = ""
    for a in rhs.replace("1", "").replace("(", "").replace(")", ""):
        if a in ungrouped:
            transposed += a
        elif a not in inferred:
            raise _Raises("broadcast size not given")
    if transposed != ungrouped and (any(ungrouped.count(a) != 1 for a in transposed)
                                    or any(rhs.count(a) != 1 for a in ungrouped)):
        raise _Raises("each index once")
    if len(transposed) != len(ungrouped):
        raise _Raises("each index once")  # (jnp.transpose raises on a permutation of the wrong length)
    by_group = {"".join(sorted(g)): d for g, d in zip(lhs_groups, shape)}
    out = []
    for group in _groups(rhs):
        size = _product([inferred[a] for a in group])
        if not isinstance(size, int) and "".join(sorted(group)) in by_group:
            size = by_group["".join(sorted(group))]
        out.append(size)
    return tuple(out)


@model("einshape.src.jax.jax_ops.einshape", "einshape.jax_einshape")
def _einshape(call: Call) -> Value:
    equation, value = call.get(0, "equation"), call.get(1, "value")
    if not call.complete or len(call.args) > 2 or not (isinstance(equation, Const) and isinstance(equation.value, str)):
        return UNKNOWN
    if not isinstance(value, ArrayVal) or value.shape is None or value.dtype is None:
        return UNKNOWN  # (anything else becomes `jnp.array(value)` first: not followed)
    if not value.jax and "64" in str(value.dtype):
        return UNKNOWN  # (a NumPy array's 64-bit dtype may become 32-bit in `jnp.array`)
    sizes: dict[str, D.Dim] = {}
    for name, v in call.kwargs.items():
        if name in ("equation", "value"):
            continue
        d = as_dim(v)
        if d is None:
            return UNKNOWN
        sizes[name] = d
    try:
        shape = output_shape(equation.value, tuple(value.shape), sizes)
    except _Raises:
        return UNKNOWN
    if any(d is None for d in shape):
        return UNKNOWN
    return ArrayVal(shape, value.dtype, jax=True)

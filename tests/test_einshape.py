"""`einshape` as the installed einshape package computes it (models/einshape.py).

tokamax folds attention heads into the sequence with it
(`shape_lib.einshape("...s(hg)d->...(sg)hd", h=num_heads_k)(q)`, a `functools.partial` of
`einshape.src.jax.jax_ops.einshape`). Every case runs through the installed einshape with JAX
and through the interpreter: the interpreter's array must have einshape's dtype and shape, and
where einshape raises, the interpreter claims nothing. Generated cases (hypothesis) split,
group, transpose and broadcast random shapes.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytree_agree import claims
from test_python_calls import HEADER, run_cpython

pytest.importorskip("einshape")

PRELUDE = HEADER + """
import einshape
from einshape.src.jax import jax_ops as einshape_jax
"""


def _check(equation: str, shape: tuple[int, ...], dtype: str = "bfloat16", **sizes: int) -> None:
    kw = "".join(f", {k}={v}" for k, v in sizes.items())
    source = PRELUDE + f"""
x = jnp.zeros({shape!r}, jnp.{dtype})
out = einshape_jax.einshape({equation!r}, x{kw})
partial = functools.partial(einshape_jax.einshape, {equation!r}{kw})(x)
public = einshape.jax_einshape({equation!r}, x{kw})
"""
    try:
        actual = run_cpython(source)["out"]
    except ValueError:
        actual = None  # einshape raises
    for name in ("out", "partial", "public"):
        got = claims(source, name)
        if actual is None:
            assert got is None, (equation, shape, sizes, name, got)
        else:
            expected = f"{actual.dtype}[{','.join(map(str, actual.shape))}]"
            assert got == expected, (equation, shape, sizes, name, got, expected)


@pytest.mark.parametrize(("equation", "shape", "sizes"), [
    ("...s(hg)d->...(sg)hd", (2, 16, 8, 64), {"h": 4}),      # tokamax's fold of q
    ("...(sg)hd->...s(hg)d", (2, 32, 4, 64), {"s": 16}),     # and its unfold
    ("...(hg)s->...h(sg)", (2, 8, 16), {"h": 4}),
    ("...(bq)->...bq", (3, 256), {"q": 64}),
    ("bshd->bhsd", (2, 16, 8, 64), {}),
    ("b...->b(...)", (2, 3, 4, 5), {}),
    ("ij->ijk", (3, 4), {"k": 5}),                             # broadcast
    ("i1j->ji", (3, 1, 4), {}),
    ("(ij)->ji", (12,), {"i": 3}),
    ("i->(ij)", (3,), {"j": 2}),
    ("...->...", (), {}),
    ("(ij)->ij", (12,), {"i": 5}),                             # not divisible: raises
    ("(ij)->ij", (12,), {}),                                   # two sizes not given: raises
    ("ij->ij", (3,), {}),                                      # rank: raises
    ("ij->i", (3, 4), {}),                                     # j dropped: raises
    ("ij->ik", (3, 4), {}),                                    # broadcast size not given: raises
    ("Ij->jI", (3, 4), {}),                                    # upper case: raises
    ("ij", (3, 4), {}),                                        # no ->: raises
    ("(ij->ij", (3, 4), {}),                                   # unclosed: raises
    ("(ij)->ij", (12,), {"i": 3, "j": 5}),                    # sizes do not fit: raises
])
def test_einshape_cases(equation: str, shape: tuple[int, ...], sizes: dict[str, int]) -> None:
    _check(equation, shape, **sizes)


@st.composite
def _equations(draw):
    """A random shape, its dimensions split into groups of indices (some sizes given), the
    indices regrouped in a random order on the right, maybe with a broadcast index."""
    rank = draw(st.integers(0, 4))
    letters = iter(string.ascii_lowercase)
    lhs, shape, sizes, indices = [], [], {}, []
    for _ in range(rank):
        parts = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        names = [next(letters) for _ in parts]
        indices += names
        shape.append(int(__import__("math").prod(parts)))
        for i, (n, p) in enumerate(zip(names, parts)):
            if i > 0 or len(parts) == 1 and draw(st.booleans()):
                sizes[n] = p
        lhs.append(names[0] if len(names) == 1 else f"({''.join(names)})")
    order = draw(st.permutations(indices))
    if draw(st.booleans()):
        b = next(letters)
        order = [*order, b]
        sizes[b] = draw(st.integers(1, 3))
    rhs, i = [], 0
    while i < len(order):
        k = draw(st.integers(1, 2))
        group = order[i:i + k]
        rhs.append(group[0] if len(group) == 1 else f"({''.join(group)})")
        i += k
    if draw(st.booleans()):
        rhs.insert(draw(st.integers(0, len(rhs))), "1")
    return "".join(lhs) + "->" + "".join(rhs), tuple(shape), sizes


@settings(max_examples=40, deadline=None, derandomize=True)
@given(_equations())
def test_generated_einshapes_agree_with_einshape(case) -> None:
    equation, shape, sizes = case
    _check(equation, shape, "float32", **sizes)

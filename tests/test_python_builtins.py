"""Builtins kernel libraries build their configs with, as CPython runs them: `zip`, `enumerate`
(with `start`), `reversed`, `dict` of key-value pairs, `sorted` of tuples (`sorted(d.items())`).

CPython is the spec (`test_python_calls.agree`): every value the interpreter claims must be
CPython's; an iterator given to `zip` or `enumerate` is not consumed ahead of CPython (what `zip`
leaves in it is the holder's), so it is not followed.
"""

from __future__ import annotations

from test_python_calls import agree, interpreted

from wgmma_lsp.interpret.values import Const


def test_zip_enumerate_reversed_dict_and_sorted_as_cpython() -> None:
    agree("""
names = ("block_m", "block_n", "stages")
values = [128, 64, 3]
config = dict(zip(names, values))
A = (config["block_n"], len(config), list(config))
B = list(enumerate("mk", start=1)) + list(enumerate(range(2)))
C = [i * 100 + v for i, v in enumerate(values, 2)]
D = list(zip(range(3), "abcd")), list(zip((1, 2), [3, 4], "xy"))
E = list(reversed(names)), list(reversed({"a": 1, "b": 2})), list(reversed(range(3)))
F = sorted({"b": 2, "a": 1, "c": 0}.items()), sorted([(2, "b"), (1, "z"), (2, "a")], reverse=True)
G = dict([("x", 1), ("y", 2)], z=3)
H = sorted([(1, 2), (1, 1), (0, 9)])[0]
""", "A", "B", "C", "D", "E", "F", "G", "H")


def test_iterators_and_undecidable_calls_are_not_claimed() -> None:
    got = interpreted("""
def gen():
    yield 1
    yield 2
    yield 3

g = gen()
A = list(zip(g, [10]))       # zip takes 1, then asks g for a second item: it is gone
B = next(g)
C = dict([("a", 1, 2)])      # ValueError
D = list(zip((1, 2), (3,), strict=True))   # ValueError
E = sorted([(1, "a"), (1, 2)])             # TypeError
""")
    for name in "ABCDE":
        assert not isinstance(got[name], Const) or name == "A", (name, got[name].describe())
    assert not isinstance(got["B"], Const), got["B"].describe()


def test_a_generator_given_to_an_unknown_callable_is_not_followed_after() -> None:
    got = interpreted("""
import somelib

def gen():
    yield 1
    yield 2

g = gen()
somelib.consume(g)           # may take any number of items
A = next(g, -1)
h = gen()
e = enumerate(h)             # lazy: h's position depends on who iterates e
B = next(h, -1)
""")
    assert not isinstance(got["A"], Const), got["A"].describe()
    assert not isinstance(got["B"], Const), got["B"].describe()


def test_text_of_shapes_and_dtype_objects_as_cpython_and_jax() -> None:
    agree("""
import jax.numpy as jnp

x = jnp.zeros((2, 3), jnp.bfloat16)
y = jnp.ones((4,), jnp.float32)
A = (str(x.dtype), f"{y.dtype}", str(jnp.dtype("float16")))
B = (f"{x.shape}", str(y.shape), repr(x.shape), f"{[1, (2, 'a')]!r}")
C = f"attention_{x.dtype}_{x.shape[0]}x{x.shape[1]}"
""", "A", "B", "C")
    got = interpreted("""
import jax.numpy as jnp

x = jnp.zeros((2, 3), jnp.bfloat16)
A = repr(x.dtype)            # dtype(bfloat16): ml_dtypes' repr, not followed
B = f"{x.dtype:>10}"         # a format spec: TypeError
C = str(jnp.float32)         # the scalar type, not a dtype object
""")
    for name in "ABC":
        assert not isinstance(got[name], Const), (name, got[name].describe())

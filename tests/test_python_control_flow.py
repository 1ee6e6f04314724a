"""Control flow and calls as CPython runs them, where kernel libraries lean on them: loops
whose body may `return` (a heuristic's `while stages > 1: ... if fits: return config`), list
slice assignment (`shape[axis:axis + 1] = (parts, n // parts)`), lambdas with keyword-only
defaults (`lambda *args, f=f: ...`), the same wrapper code made twice and nested
(`vmap(vmap_split(f))`), call chains deeper than a kernel file's own, pydantic `Literal`
fields.

CPython is the spec: each program runs in CPython and through the interpreter (as module
code), and every value the interpreter claims for the names checked must be CPython's
(`test_python_calls.agree`).
"""

from __future__ import annotations

import importlib.util

import pytest
from test_python_calls import agree, interpreted

from wgmma_lsp.interpret.values import Const

#: A heuristic's loop: try fewer stages until they fit, return the first that does.
PICK = """
def pick(limit):
    stages = 5
    while stages > 1:
        stages -= 1
        if stages * 48 <= limit:
            return stages
    return 0
"""


def test_a_loop_whose_body_may_return_runs_iteration_by_iteration() -> None:
    agree(PICK + """
def first_fit(sizes, limit):
    for s in sizes:
        if s <= limit:
            return s
    return None

def total_until(xs, stop):
    t = 0
    for x in xs:
        if x == stop:
            return t
        t += x
    return -t

A = (pick(200), pick(100), pick(10))
B = (first_fit((300, 200, 100), 250), first_fit((300, 200), 10))
C = (total_until([1, 2, 3, 4], 3), total_until([1, 2], 9))
""", "A", "B", "C")


def test_a_loop_that_may_return_makes_what_follows_depend_on_the_path() -> None:
    # `limit` is unknown: the loop's `return` may be taken in any iteration, so the values
    # after the loop are not claimed, and the function's result is no single constant.
    got = interpreted(PICK + """
import random
R = pick(random.randint(0, 300))
""")
    assert not isinstance(got["R"], Const), got["R"].describe()


def test_list_slice_assignment_as_cpython() -> None:
    agree("""
def split_dim(shape, axis, parts):
    shape = list(shape)
    if shape[axis] == 1:
        shape[axis : axis + 1] = (1, 1)
    else:
        shape[axis : axis + 1] = (parts, shape[axis] // parts)
    return shape

a = [1, 2, 3, 4, 5]
a[1:3] = [9]
b = [1, 2, 3, 4]
b[::2] = (7, 8)
c = [1, 2, 3]
c[len(c):] = [4, 5]
d = [1, 2, 3]
d[-2:] = []
A = (split_dim((1024, 4, 64), 0, 2), split_dim((1, 4), 0, 2), split_dim((8, 6, 2), -2, 3))
B = (a, b, c, d)
""", "A", "B")


def test_lambda_keyword_only_defaults_are_bound() -> None:
    agree("""
def inc(x):
    return x + 1

g = lambda *args, f=inc: f(*args)
h = lambda a, *, scale=3, shift=1: a * scale + shift
fs = [lambda x, k=k: x * k for k in range(3)]
A = (g(1), h(2), h(2, scale=5), [f(10) for f in fs])
""", "A")


def test_the_same_wrapper_code_made_twice_runs_nested() -> None:
    agree("""
import functools

def wrap(f, add):
    @functools.wraps(f)
    def wrapped(*args):
        return f(*args) + add
    return wrapped

def base(x):
    return x * 2

inner = wrap(base, 1)
outer = wrap(inner, 10)
twice = wrap(wrap(wrap(base, 1), 2), 3)
A = (inner(5), outer(5), twice(1))
""", "A")


def test_recursion_is_not_followed_but_claims_nothing_false() -> None:
    got = interpreted("""
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)

R = fact(5)
""")
    v = got["R"]
    assert not isinstance(v, Const) or v.value == 120, v.describe()


def test_a_call_chain_deeper_than_a_kernel_files_runs_to_its_end() -> None:
    # tokamax: a test, the op's dispatch, vmaps, the kernel function, plgpu.kernel, the body,
    # pl.when, a fori_loop body: ~30 frames. Each level here is its own function.
    levels = 34
    defs = ["def f0(x):\n    return x + 1\n"]
    defs += [f"def f{i}(x):\n    return f{i - 1}(x) + 1\n" for i in range(1, levels)]
    agree("".join(defs) + f"A = f{levels - 1}(0)\n", "A")


@pytest.mark.skipif(importlib.util.find_spec("pydantic") is None, reason="pydantic not installed")
def test_pydantic_literal_fields_keep_their_values() -> None:
    agree("""
import dataclasses
from typing import Literal
import pydantic

@pydantic.dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    block_q: int = 64
    persistent: pydantic.StrictBool | Literal["static"] = False
    mode: Literal["a", "b"] = "a"

c1 = Config(persistent=True)
c2 = Config(persistent="static", mode="b")
c3 = dataclasses.replace(c1, block_q=128)
A = (c1.persistent, c2.persistent, c2.mode, c3.persistent, c3.block_q)
""", "A")


def test_type_checking_is_false_when_the_code_runs() -> None:
    """`typing.TYPE_CHECKING` is False when the code runs: the `else:` of `if TYPE_CHECKING:` is
    what runs (JAX's own tests rebind `plgpu` there), as in CPython."""
    agree("""
import typing
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    MODE = "checking"
else:
    MODE = "running"
FLAG = typing.TYPE_CHECKING
""", "MODE", "FLAG")

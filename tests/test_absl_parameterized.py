"""absl's parameterized test methods, as its metaclass makes them (models/absl_parameterized.py).

A kernel library's tests reach its kernels through methods absl generates: `test_x0`, `test_x1`,
... for `parameters` and `product`, `test_x_<name>` for `named_parameters`; code calls them by
those names. Each program runs in CPython (with absl) and through the interpreter; what the
interpreter claims must be what CPython holds — which methods exist, and what each is called
with (the side effects in `seen`).
"""

from __future__ import annotations

from pytree_agree import agree, claims

CLASS = """
from absl.testing import parameterized

seen = []

class T(parameterized.TestCase):

    @parameterized.parameters((1, 2), (3, 4), [5, 6])
    def test_add(self, a, b):
        seen.append(("add", a, b))

    @parameterized.parameters(dict(a=1, b=2), {"a": 7, "b": 8})
    def test_kw(self, a, b):
        seen.append(("kw", a, b))

    @parameterized.parameters(8, 16)
    def test_one(self, n):
        seen.append(("one", n))

    @parameterized.parameters(["ab", "cd"])
    def test_strs(self, s):
        seen.append(("strs", s))

    @parameterized.named_parameters(dict(testcase_name="small", n=8), ("big", 128), ("_odd", 3))
    def test_size(self, n):
        seen.append(("size", n))

    @parameterized.named_parameters(("x", 1))
    def testplain(self, n):
        seen.append(("plain", n))

    @parameterized.product(m=[64, 128], dtype=["f16", "bf16"])
    def test_grid(self, m, dtype):
        seen.append(("grid", m, dtype))

    @parameterized.product([dict(a=1, b=2), dict(a=3, b=4)], c=[0, 1])
    def test_mixed(self, a, b, c):
        seen.append(("mixed", a, b, c))

t = T()
"""


def test_parameters_make_indexed_methods_with_positional_and_keyword_cases() -> None:
    agree(CLASS + """
t.test_add0(); t.test_add2(); t.test_kw1(); t.test_one1(); t.test_strs0(); t.test_strs1()
""", "seen")


def test_named_parameters_names() -> None:
    agree(CLASS + """
t.test_size_small(); t.test_size_big(); t.test_size_odd(); t.testplainx()
""", "seen")


def test_product_orders_the_first_axis_slowest() -> None:
    agree(CLASS + """
for i in range(4):
    getattr(t, f"test_grid{i}")()
t.test_mixed0(); t.test_mixed3()
""", "seen")


def test_cases_not_known_are_not_guessed() -> None:
    """Cases from an iterable whose length is not known: no method is claimed to exist or to
    run with some case (CPython runs `test_n0` with 0; the interpreter may only agree or claim
    nothing)."""
    source = """
from absl.testing import parameterized
import random

seen = []

class T(parameterized.TestCase):
    @parameterized.parameters(*[n for n in range(random.randrange(1, 3))])
    def test_n(self, n):
        seen.append(n)

T().test_n0()
ran = list(seen)
"""
    assert claims(source, "ran") in (None, [0])

"""Arithmetic on known constants is CPython's, except where CPython would build a huge result:
`10 ** 10 ** 8` is valid Python that takes CPython minutes; the analyzer gives it up as unknown
(no size or dtype a check needs is that large) rather than hang the editor."""

from __future__ import annotations

import ast

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import const_fold
from wgmma_lsp.interpret.values import Const, TupleVal

SMALL = ["2 ** 16", "7 ** 300", "-3 ** 5", "(-2) ** 63", "2 ** -2", "1 << 4000", "-1 << 100",
         "'ab' * 1000", "(1, 2) * 4", "12345678901234567890 * 98765432109876543210",
         "17 // 5", "-17 % 5", "7 / 2", "6 & 3 | 8 ^ 1", "True << 3", "2.5 ** 2", "0 ** 0", "1 ** 10 ** 9",
         "pow(3, 40)", "pow(3, 10 ** 9, 7)"]
HUGE = ["10 ** 10 ** 8", "'x' * 10 ** 10", "1 << 10 ** 9", "(1,) * 10 ** 12", "3 ** 10 ** 9",
        "(10 ** 1000) * (10 ** 30000)", "pow(10, 10 ** 8)"]


def _value_of_x(expr: str) -> object:
    analysis = analyze(f"x = {expr}\n")
    (record,) = [r for r in analysis.records.values() if r.name == "x"]
    (value,) = record.values
    if isinstance(value, TupleVal) and all(isinstance(v, Const) for v in value.items):
        return tuple(v.value for v in value.items)
    return value.value if isinstance(value, Const) else value


@pytest.mark.parametrize("expr", SMALL)
def test_known_arithmetic_is_cpythons(expr: str) -> None:
    assert _value_of_x(expr) == eval(expr)  # noqa: S307 - literal arithmetic written above


@pytest.mark.parametrize("expr", HUGE)
def test_a_huge_result_is_unknown_and_does_not_hang(expr: str) -> None:
    assert not isinstance(_value_of_x(expr), (int, str, tuple))


def test_the_bounds_agree_with_the_result_size() -> None:
    """Below the bound the result is computed (and is that large); above it, refused."""
    assert (2 ** (const_fold.MAX_BITS - 1)).bit_length() == const_fold.MAX_BITS
    assert not const_fold.too_big(ast.Pow(), 2, const_fold.MAX_BITS)
    assert const_fold.too_big(ast.Pow(), 2, const_fold.MAX_BITS + 1)
    assert not const_fold.too_big(ast.Mult(), "x", const_fold.MAX_ITEMS)
    assert const_fold.too_big(ast.Mult(), const_fold.MAX_ITEMS + 1, "x")

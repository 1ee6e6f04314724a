"""Python's own arithmetic on two known constants, refused where its result would be huge.

`10 ** 10 ** 8` or `'x' * 10 ** 10` is valid Python that CPython would spend minutes or gigabytes
on; the analyzer gives such a value up as unknown (no size or dtype the checks need is ever that
large) instead of hanging the editor.
"""

from __future__ import annotations

import ast
import operator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable

MAX_BITS = 1 << 16  # an int result of up to ~20,000 decimal digits is computed
MAX_ITEMS = 1 << 20  # a str/bytes/tuple/list repetition of up to ~a million items

BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.Div: operator.truediv, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.MatMult: operator.matmul,
}

_SEQUENCES = (str, bytes, tuple, list)


def _is_int(x: Any) -> bool:
    return isinstance(x, int)  # bools too: True << 10 ** 9 is as big


def too_big(op: ast.operator, a: Any, b: Any) -> bool:
    """Would `a <op> b` build a result past the bounds above?"""
    if isinstance(op, ast.Pow) and _is_int(a) and _is_int(b) and b > 0:
        return abs(a) > 1 and b * (abs(a).bit_length() - 1) > MAX_BITS  # a lower bound on its bits
    if isinstance(op, ast.LShift) and _is_int(a) and _is_int(b):
        return a != 0 and b + abs(a).bit_length() > MAX_BITS
    if isinstance(op, ast.Mult):
        for seq, n in ((a, b), (b, a)):
            if isinstance(seq, _SEQUENCES) and _is_int(n):
                return len(seq) * n > MAX_ITEMS
        if _is_int(a) and _is_int(b):
            return abs(a).bit_length() + abs(b).bit_length() > MAX_BITS
    return False


class TooBig(Exception):
    """The folded result would be too large to compute (see `too_big`)."""


def fold(op: ast.operator, a: Any, b: Any) -> Any:
    """`a <op> b` as CPython computes it. Raises what CPython raises (ZeroDivisionError, TypeError,
    OverflowError, ...), KeyError for an operator it does not fold, TooBig past the bounds."""
    fn = BINOPS[type(op)]
    if too_big(op, a, b):
        raise TooBig(f"{type(op).__name__} of {type(a).__name__} and {type(b).__name__}")
    return fn(a, b)


def guarded_pow(base: Any, exp: Any, mod: Any = None) -> Any:
    """The builtin `pow`, refusing what `base ** exp` refuses (three-argument `pow` is cheap)."""
    if mod is None and too_big(ast.Pow(), base, exp):
        raise TooBig("pow")
    return pow(base, exp) if mod is None else pow(base, exp, mod)

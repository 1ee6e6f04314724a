"""Dimensions: an int, or a linear expression over named unknowns (`tile_m`, `2*tile_n + 8`).

Two dimensions are proven equal when their difference is 0, proven different when it is a
non-zero constant, and undecided otherwise (`tile_m` against `64`, or `tile_n` against `2*tile_n`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sym:
    """sum(coef * name) + const, with names sorted; never all-zero terms."""

    terms: tuple[tuple[str, int], ...]
    const: int = 0

    @staticmethod
    def var(name: str) -> "Sym":
        return Sym(((name, 1),), 0)

    def __str__(self) -> str:
        parts = []
        for name, coef in self.terms:
            if coef == 1:
                parts.append(name)
            elif coef == -1:
                parts.append(f"-{name}")
            else:
                parts.append(f"{coef}*{name}")
        text = " + ".join(parts).replace("+ -", "- ")
        if self.const:
            text += f" + {self.const}" if self.const > 0 else f" - {-self.const}"
        return text

    __repr__ = __str__


Dim = int | Sym | None  # None: unknown


def _terms(d: int | Sym) -> tuple[dict[str, int], int]:
    if isinstance(d, Sym):
        return dict(d.terms), d.const
    return {}, int(d)


def _make(terms: dict[str, int], const: int) -> int | Sym:
    items = tuple(sorted((k, v) for k, v in terms.items() if v))
    return Sym(items, const) if items else const


def add(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:  # the common case, without building term tables
        return a + b
    if a is None or b is None:
        return None
    ta, ca = _terms(a)
    tb, cb = _terms(b)
    for k, v in tb.items():
        ta[k] = ta.get(k, 0) + v
    return _make(ta, ca + cb)


def neg(a: Dim) -> Dim:
    if type(a) is int:
        return -a
    if a is None:
        return None
    t, c = _terms(a)
    return _make({k: -v for k, v in t.items()}, -c)


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def mul(a: Dim, b: Dim) -> Dim:
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(b, Sym):
        a, b = b, a
    if isinstance(b, int):
        t, c = _terms(a)  # type: ignore[arg-type]
        return _make({k: v * b for k, v in t.items()}, c * b)
    # Non-linear: the product is a size of its own, named by its expression (the same
    # expression of the same names is the same size; anything else about it is undecided).
    x, y = sorted((_operand_text(a), _operand_text(b)))
    return Sym.var(f"{x}*{y}")


def floordiv(a: Dim, b: Dim) -> Dim:
    if a is None or b is None or b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if isinstance(a, Sym) and isinstance(b, int):
        if all(v % b == 0 for _, v in a.terms) and a.const % b == 0:
            return _make({k: v // b for k, v in a.terms}, a.const // b)
    if b == 1:
        return a
    if a == 0:
        return 0
    # Not linear: a size of its own named by its expression (`16384 // jax.device_count()`).
    return Sym.var(f"{_operand_text(a)} // {_operand_text(b)}")


def cdiv(a: Dim, b: Dim) -> Dim:
    """`pl.cdiv(a, b)` of two sizes (`a >= 0`, `b > 0`): exact where `b` divides every term
    (`cdiv(2*n, 2)` is `n`), else a size of its own named by the call (`cdiv(T, 128)`), since
    JAX's versions spell it differently for negative operands (a size is never negative)."""
    if a is None or b is None or (isinstance(b, int) and b <= 0):
        return None
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b) if a >= 0 else None
    if isinstance(a, Sym) and isinstance(b, int) \
            and all(v % b == 0 for _, v in a.terms) and a.const % b == 0:
        return _make({k: v // b for k, v in a.terms}, a.const // b)
    if b == 1:
        return a
    return Sym.var(f"cdiv({a}, {b})")


def _operand_text(d: int | Sym) -> str:
    """A dimension as an operand of a named expression: parenthesised unless it is one name
    or a non-negative number."""
    if isinstance(d, int):
        return str(d) if d >= 0 else f"({d})"
    if len(d.terms) == 1 and d.terms[0][1] == 1 and not d.const:
        name = d.terms[0][0]
        return f"({name})" if " " in name else name
    return f"({d})"


def equal(a: Dim, b: Dim) -> bool | None:
    """True if proven equal, False if proven different, None if undecided."""
    if a is None or b is None:
        return None
    if type(a) is int and type(b) is int:
        return a == b
    if a == b:  # the same expression (a Sym compares by its terms and constant)
        return True
    d = sub(a, b)
    if isinstance(d, int):
        return d == 0
    return None


def shapes_equal(a: tuple[Dim, ...] | None, b: tuple[Dim, ...] | None) -> bool | None:
    if a is None or b is None:
        return None
    if len(a) != len(b):
        return False
    result: bool | None = True
    for x, y in zip(a, b):
        e = equal(x, y)
        if e is False:
            return False
        if e is None:
            result = None
    return result


def is_known(shape: tuple[Dim, ...] | None) -> bool:
    return shape is not None and all(d is not None for d in shape)


def format_shape(shape: tuple[Dim, ...]) -> str:
    """Python's tuple spelling, as JAX's messages print shapes: `(64, 128)`, `(tile_m, tile_n)`."""
    items = [str(d) if d is not None else "?" for d in shape]
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def format_dims(shape: tuple[Dim, ...]) -> str:
    """The aval spelling inside brackets: `64,128`; `tile_m, tile_n` when symbolic."""
    items = [str(d) if d is not None else "?" for d in shape]
    sep = "," if all(isinstance(d, int) for d in shape) else ", "
    return sep.join(items)

"""Operators on objects of the user's classes, as CPython runs them (interpret/operators.py).

Kernel libraries build values with them: tokamax's attention op writes `mask &= CausalMask()`,
and before the interpreter called `Mask.__and__` the mask it handed on was unknown, so the test
context never reached the kernel's causal code. CPython is the spec: each program runs in
CPython and through the interpreter, and every value the interpreter claims must be CPython's
(`test_python_calls.agree`); where CPython would raise or go on with a builtin's own behaviour,
the interpreter claims nothing.
"""

from __future__ import annotations

from test_python_calls import agree, interpreted, run_cpython

from wgmma_lsp.interpret.values import Const

VEC = """
import dataclasses

@dataclasses.dataclass(frozen=True)
class Vec:
    x: int
    y: int
    def __add__(self, other):
        if isinstance(other, Vec):
            return Vec(self.x + other.x, self.y + other.y)
        if isinstance(other, int):
            return Vec(self.x + other, self.y + other)
        return NotImplemented
    def __radd__(self, other):
        return Vec(self.x + other * 10, self.y + other * 10)
    def __and__(self, other):
        return Vec(min(self.x, other.x), min(self.y, other.y))
    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y
    def __neg__(self):
        return Vec(-self.x, -self.y)
    def __invert__(self):
        return Vec(self.y, self.x)
    def __len__(self):
        return 2
    def __bool__(self):
        return self.x != 0
"""


def test_binary_reflected_and_unary_operators_call_the_class_methods() -> None:
    agree(VEC + """
v = Vec(1, 2) + Vec(3, 4)
A = (v.x, v.y)
w = 5 + Vec(1, 1)            # int.__add__ declines: Vec.__radd__
B = (w.x, w.y)
u = Vec(1, 1) + 2
C = (u.x, u.y)
n = -Vec(1, 2)
m = ~Vec(1, 2)
D = (n.x, n.y, m.x, m.y)
E = Vec(1, 2) @ Vec(3, 4)
""", "A", "B", "C", "D", "E")


def test_augmented_assignment_falls_back_to_the_binary_method() -> None:
    agree(VEC + """
m = Vec(1, 5)
m &= Vec(3, 2)               # no __iand__: __and__, a new object bound to the name
k = Vec(1, 1)
k += 4
A = (m.x, m.y, k.x, k.y)

class Acc:
    def __init__(self):
        self.total = 0
    def __iadd__(self, n):
        self.total += n
        return self
    def __add__(self, n):
        return -1

a = Acc()
alias = a
a += 3
a += 4
B = (a.total, alias.total, a is alias)
""", "A", "B")


def test_truth_and_len_call_bool_and_len() -> None:
    agree(VEC + """
class Sized:
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n

A = (bool(Vec(0, 1)), bool(Vec(2, 1)), len(Vec(0, 0)))
B = "yes" if Vec(0, 3) else "no"
C = (bool(Sized(0)), bool(Sized(3)), len(Sized(7)), "e" if Sized(0) else "f")
D = len([x for x in (Sized(0), Sized(2), Vec(0, 1), Vec(1, 0)) if x])
E = not Sized(0)
""", "A", "B", "C", "D", "E")


def test_a_subclass_reflected_method_goes_first() -> None:
    agree("""
class Base:
    def __and__(self, other):
        return "base"
    def __rand__(self, other):
        return "base-r"

class Derived(Base):
    def __rand__(self, other):
        return "derived-r"

class Same(Base):
    pass

A = Base() & Derived()       # Derived overrides __rand__: it runs first
B = Base() & Same()          # Same inherits it: Base.__and__ runs
C = Derived() & Base()
D = Derived() & Derived()    # same type: no reflected call
""", "A", "B", "C", "D")


def test_declined_everywhere_or_builtin_behaviour_is_not_claimed() -> None:
    got = interpreted("""
class Picky:
    def __add__(self, other):
        return NotImplemented
    def __rmod__(self, other):
        return "never: str formats first"
    def __rmul__(self, other):
        return NotImplemented
    def __index__(self):
        return 2

A = Picky() + 1              # TypeError in CPython
B = "%s!" % Picky()          # str's own % runs first
C = [1, 2] * Picky()         # __rmul__ declines: the list repeats itself by __index__
""")
    for name in "ABC":
        assert not isinstance(got[name], Const), (name, got[name].describe())


def test_tokamax_style_mask_intersection() -> None:
    agree("""
import dataclasses

@dataclasses.dataclass(frozen=True, slots=True)
class CausalMask:
    offset: int = 0
    window_size: int | None = None

@dataclasses.dataclass(frozen=True, slots=True, init=False)
class Mask:
    bool_mask: object = None
    _: dataclasses.KW_ONLY
    causal_mask: CausalMask | None = None
    k_end: object = None

    def __init__(self, bool_mask=None, *, causal_mask=None, k_end=None, is_causal=False):
        if is_causal:
            causal_mask = CausalMask()
        object.__setattr__(self, "bool_mask", bool_mask)
        object.__setattr__(self, "causal_mask", causal_mask)
        object.__setattr__(self, "k_end", k_end)

    @property
    def is_causal(self):
        return (self.causal_mask is not None and isinstance(self.causal_mask.offset, int)
                and self.causal_mask.offset == 0 and self.causal_mask.window_size is None)

    def __and__(self, other):
        if isinstance(other, CausalMask):
            other = Mask(causal_mask=other)
        elif not isinstance(other, Mask):
            other = Mask(other)

        def combine(fn):
            return lambda a, b: b if a is None else a if b is None else fn(a, b)

        return Mask(bool_mask=combine(min)(self.bool_mask, other.bool_mask),
                    causal_mask=combine(lambda a, b: a)(self.causal_mask, other.causal_mask),
                    k_end=combine(min)(self.k_end, other.k_end))

def bind(mask=None, is_causal=False):
    if isinstance(mask, CausalMask):
        mask = Mask(causal_mask=mask)
    elif not isinstance(mask, Mask):
        mask = Mask(mask)
    if is_causal:
        mask &= CausalMask()
    return mask

A = bind(is_causal=True).is_causal
B = bind(Mask(k_end=7), is_causal=True).k_end
C = bind(CausalMask(offset=2)).is_causal
D = bind(5).is_causal
""", "A", "B", "C", "D")


def test_subscript_membership_comparison_and_iteration_call_the_class_methods() -> None:
    agree("""
class Table:
    def __init__(self, n):
        self.n = n
    def __getitem__(self, i):
        return i * 10 + self.n
    def __contains__(self, x):
        return x == self.n
    def __iter__(self):
        return iter(range(self.n))
    def __eq__(self, other):
        if not isinstance(other, Table):
            return NotImplemented
        return other.n == self.n
    def __lt__(self, other):
        return self.n < other.n

class Tiles:
    def __init__(self, *sizes):
        self.sizes = sizes
    def __iter__(self):
        for s in self.sizes:
            yield s * 2

t = Table(3)
A = (t[4], t[0], 3 in t, 4 in t, 4 not in t)
B = (list(t), tuple(Tiles(1, 2)), [x + 1 for x in Tiles(5)])
C = (Table(2) == Table(2), Table(2) == Table(3), Table(2) != Table(2), Table(2) != Table(5))
D = (Table(1) < Table(2), Table(3) > Table(2), Table(2) > Table(3))
E = (Table(2) == 2, 2 != Table(2))   # declined by __eq__ both ways: identity
total = 0
for k in Table(4):
    total += k
F = total
""", "A", "B", "C", "D", "E", "F")


def test_a_comparison_nobody_defines_is_not_claimed() -> None:
    got = interpreted("""
class Plain:
    pass

class Picky:
    def __lt__(self, other):
        return NotImplemented

A = Plain() < Plain()        # TypeError in CPython
B = Picky() < 3              # declined, int declines too: TypeError
C = Picky()[0]               # no __getitem__: TypeError
""")
    for name in "ABC":
        assert not isinstance(got[name], Const), (name, got[name].describe())


def test_str_repr_and_f_strings_call_the_class_methods() -> None:
    agree("""
class Tile:
    def __init__(self, m, n):
        self.m, self.n = m, n
    def __repr__(self):
        return f"Tile({self.m}, {self.n})"

class Named(Tile):
    def __str__(self):
        return f"{self.m}x{self.n}"

A = (str(Tile(1, 2)), repr(Tile(3, 4)), str(Named(5, 6)), repr(Named(7, 8)))
B = f"{Named(64, 128)}/{Tile(1, 1)!r}/{Named(2, 2)!r}/{Tile(3, 3)}"
C = "kernel_" + str(Named(128, 256))
""", "A", "B", "C")
    got = interpreted("""
class Plain:
    pass

class Formats:
    def __format__(self, spec):
        return "f"

A = str(Plain())             # <__program__.Plain object at 0x...>: not known
B = f"{Formats()}"
C = f"{Plain():>8}"          # TypeError
""")
    for name in "ABC":
        assert not isinstance(got[name], Const), (name, got[name].describe())


def test_containers_take_the_same_object_as_equal_without_asking_eq() -> None:
    # CPython's identity shortcut: `x in (x,)`, `[x] == [x]`, `xs.index(x)` are true for the very
    # same object whatever its `__eq__` says; `x == x` asks it. Where the same abstract value may
    # stand for two objects (a memo replay's), the shortcut is not claimed, and never its opposite.
    source = """
class Never:
    def __eq__(self, other):
        return False
    __hash__ = None

x = Never()
A = x == x
B = x in (x,)
C = [x] == [x]
D = [x].index(x)
E = x in (Never(),)
"""
    namespace = run_cpython(source)
    assert (namespace["A"], namespace["B"], namespace["C"], namespace["D"], namespace["E"]) \
        == (False, True, True, 0, False)
    got = interpreted(source)
    assert isinstance(got["A"], Const) and got["A"].value is False
    assert isinstance(got["E"], Const) and got["E"].value is False
    for name in "BCD":  # True in CPython: claimed only as True
        v = got[name]
        assert not isinstance(v, Const) or v.value == namespace[name], (name, v.describe())

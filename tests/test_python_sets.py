"""Sets as CPython keeps them: each element once (by `==`: `{1, 1.0, True}` is `{1}`), in an
order the interpreter does not claim; and `max`/`min` with `key=` and `default=`.

tokamax's vjp heuristics collect candidate configs in a set and pick one with
`next(iter(configs))` or `max(configs, key=_score)`. Each program runs in CPython and through
the interpreter: where the interpreter claims a value, it must be CPython's; where the answer
would depend on the order of a set's elements, it claims none.
"""

from __future__ import annotations

from pytree_agree import claims
from test_python_calls import agree

CONFIG = """
import dataclasses

@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    block: int
    stages: int = 2
    residual: int = 1
"""


def test_configs_collected_in_a_set_as_a_heuristic_picks_one() -> None:
    agree(CONFIG + """
def candidates(limit):
    configs = set()
    for block in (128, 64):
        for residual in (1, 2):
            for stages in (2, 3, 4):
                if block * stages * residual <= limit:
                    configs.add(Config(block=block, stages=stages, residual=residual))
        if configs:
            break
    if not configs:
        raise ValueError("nothing fits")
    return configs

def pick(limit):
    configs = candidates(limit)
    if len(configs) == 1:
        return next(iter(configs))
    return max(configs, key=lambda c: (c.stages, c.residual))

few = pick(256)
many = pick(1024)
few_block, few_stages = few.block, few.stages
many_stages, many_residual = many.stages, many.residual
count = len(candidates(1024))
""", "few_block", "few_stages", "many_stages", "many_residual", "count")


def test_an_element_equal_to_one_held_is_not_added_again() -> None:
    agree(CONFIG + """
s = {1, 1.0, True, 2}
s.add(2)
s.update([3, 2.0], (4,))
s.discard(4)
s.discard(99)
n = len(s)
ones = sorted(s)
has = (3 in s, 5 in s, 5 not in s, 1.0 in s)
cfgs = {Config(block=64), Config(block=64, stages=2), Config(block=128)}
cfg_count = len(cfgs)
fs = frozenset([1, 2, 2])
both = s.union(fs, [9])
both_count = len(both)
copied = s.copy()
copied.add(100)
original_count = len(s)
empty = (bool(set()), bool({0}), len(frozenset()))
""", "s", "n", "ones", "has", "cfg_count", "fs", "both", "both_count", "original_count", "empty")


def test_a_set_comprehension_and_a_starred_literal() -> None:
    agree("""
sq = {x * x % 5 for x in range(6)}
merged = {*sq, *(7, 7), 0}
counts = (len(sq), len(merged), 7 in merged)
""", "sq", "merged", "counts")


def test_max_and_min_honour_key_and_default_as_cpython_does() -> None:
    agree("""
a = max(1, -3, key=abs)
b = min([3, -1, 2], key=lambda x: -x)
c = max([(1, "a"), (1, "b")], key=lambda p: p[0])
d = min([(2, "x"), (1, "y"), (1, "z")], key=lambda p: p[0])
e = max([], default=7)
f = min((), default=None)
g = max(range(5), key=lambda i: (i % 3, -i))
h = max("abc")
""", "a", "b", "c", "d", "e", "f", "g", "h")


def test_an_order_dependent_answer_is_not_claimed() -> None:
    source = CONFIG + """
configs = {Config(block=64, stages=2), Config(block=128, stages=2)}
tied = max(configs, key=lambda c: c.stages)
first = next(iter(configs))
as_list = list(configs)
words = {"a", "b"}
listed = [w for w in words]
"""
    for name in ("tied", "first", "as_list", "listed"):
        assert claims(source, name) is None, name


def test_unhashable_or_undecided_elements_leave_the_contents_unknown() -> None:
    source = """
import os
lists = set()
try:
    lists.add([1])
except TypeError:
    pass
lists_count = len(lists)
flag = os.environ.get("WGMMA_LSP_NOT_SET") is None
grown = {1}
if flag:
    grown.add(2)
grown_count = len(grown)
"""
    assert claims(source, "grown_count") is None  # (grown on one branch of an undecided `if`)
    assert claims(source, "lists_count") is None


def test_a_set_made_in_a_function_is_a_new_set_each_call() -> None:
    agree("""
def make(x):
    s = set()
    s.add(x)
    return s

a = make(1)
b = make(1)
a.add(2)
sizes = (len(a), len(b))
""", "sizes")


def test_enum_members_and_configs_holding_them_as_elements() -> None:
    """An IntEnum's members equal their ints, a plain Enum's only themselves; a frozen dataclass
    holding members is hashed by them (tokamax's GLU configs: `wg_dimension=MatmulDimension.M`)."""
    agree("""
import dataclasses
import enum

class Dim(enum.IntEnum):
    M = 0
    N = 1

class Mode(enum.Enum):
    A = 1
    B = 2

@dataclasses.dataclass(frozen=True)
class Cfg:
    tile: int = 64
    dim: Dim = Dim.N
    mode: Mode = Mode.A

ints = {Dim.M, 0, 1, Dim.N, 2}
modes = {Mode.A, Mode.A, Mode.B}
mixed = {Mode.A, 1}
cfgs = {Cfg(), Cfg(dim=Dim.N), Cfg(dim=Dim.M), Cfg(tile=128, mode=Mode.B), Cfg(128, Dim.N, Mode.B)}
counts = (len(ints), len(modes), len(mixed), len(cfgs))
found = (Cfg(dim=Dim.M) in cfgs, Cfg(tile=32) in cfgs, 0 in ints, Mode.B in modes, 2 in modes)
""", "counts", "found")


def test_a_thousand_configs_built_in_nested_loops_as_an_autotuner_lists_them() -> None:
    """Past the pairwise-comparison limit: elements with equality keys are deduplicated by key."""
    agree(CONFIG + """
def autotuning_configs():
    configs = set()
    for block in (64, 128, 256):
        for stages in (1, 2, 3, 4):
            for residual in (1, 2, 3, 4, 5):
                for repeat in range(2):
                    for split in (1, 2, 4):
                        for extra in (0, 1, 2, 3, 4, 5):
                            if split == 4 and extra > 2:
                                continue
                            configs.add(Config(block=block * split, stages=stages + 10 * extra,
                                               residual=residual))
    return configs

configs = autotuning_configs()
count = len(configs)
has = (Config(block=256, stages=3, residual=5) in configs, Config(block=64, stages=99) in configs)
""", "count", "has")


def test_set_operators_and_comparisons_as_cpython_computes_them() -> None:
    """`|`, `&`, `-`, `^` keep the left operand's type and, for equal elements, the left
    operand's own (`{1} | {1.0}` holds the int); comparisons are of the elements."""
    agree("""
a = {1, 2, 3}
b = frozenset({3, 4, 1.0})
u = a | b
i = a & {2, 3, 9}
d = a - b
x = a ^ b
fu = b | a
kinds = (isinstance(u, frozenset), isinstance(fu, frozenset), isinstance(b - a, frozenset), isinstance(u, set))
n = (len(u), len(i), len(d), len(x), sorted(u), sorted(i), sorted(d), sorted(x))
ints = [isinstance(v, float) for v in sorted(u)]
floats = [isinstance(v, float) for v in sorted(fu)]
e = (a == {3, 2, 1}, a == b, a != b, {1} <= a, {1} < {1}, a >= {1, 2}, a > a, frozenset(a) == a,
     set() == frozenset(), a == [1, 2, 3])
""", "kinds", "n", "ints", "floats", "e")


def test_an_intersection_of_equal_elements_of_different_types_is_not_claimed() -> None:
    """`{1} & {1.0}` holds whichever CPython iterates (the smaller set's): not claimed."""
    assert claims("amb = {1} & {1.0}\n", "amb") is None

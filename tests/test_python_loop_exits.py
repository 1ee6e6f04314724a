"""Loops that leave early, as CPython runs them: short loops over known items whose body has
its own `break` / `continue` are unrolled (each iteration sees its own item; once a `break`
may have run, the later iterations may not), and `try: x = next(it)` / `except StopIteration:`
runs its handler only where the iterator may be exhausted.

tokamax's attention kernel walks the accumulator's tiles this way (`ds, acc = next(acc_tiles)`
in a `for` whose handler `break`s). Each program runs in CPython and through the interpreter:
where the interpreter claims a value, it must be CPython's.
"""

from __future__ import annotations

from pytree_agree import claims
from test_python_calls import agree

TILES = """
def tiles(n):
    for d in range(0, n, 32):
        yield d, d * 2
"""


def test_break_on_a_certain_path_ends_the_loop() -> None:
    agree("""
seen = []
for i in range(6):
    if i == 3:
        break
    seen.append(i)
last = i
""", "seen", "last")


def test_continue_skips_the_rest_of_the_iteration() -> None:
    agree("""
seen = []
for i in range(5):
    if i % 2:
        continue
    seen.append(i * 10)
total = sum(seen)
""", "seen", "total")


def test_for_else_runs_when_no_break_ran() -> None:
    agree("""
found = None
for i in (1, 3, 5):
    if i > 4:
        found = i
        break
else:
    found = -1
missing = None
for i in (1, 3):
    if i > 4:
        missing = i
        break
else:
    missing = -1
""", "found", "missing")


def test_next_under_except_stop_iteration_in_a_loop() -> None:
    agree(TILES + """
def walk(acc=1):
    it = tiles(64)
    out = []
    for _ in range(4):
        acc = acc + 1
        out.append(acc)
        try:
            ds, acc = next(it)
        except StopIteration:
            break
    return acc, out

result = walk()
""", "result")


def test_a_handler_runs_where_the_iterator_is_exhausted() -> None:
    agree(TILES + """
it = tiles(32)
first = next(it)
try:
    second = next(it)
except StopIteration:
    second = "exhausted"
""", "first", "second")


def test_a_break_that_may_run_leaves_later_values_unclaimed_or_right() -> None:
    """A `break` on an undecided path: what the loop leaves is CPython's or not claimed."""
    source = """
import random
seen = []
for i in range(4):
    seen.append(i)
    if random.random() < 0.5:
        break
n = len(seen)
"""
    from test_python_calls import run_cpython

    got = claims(source, "n")
    assert got is None or got == run_cpython(source)["n"] == got, got
    assert claims(source, "seen") is None


def test_nested_loops_break_only_their_own() -> None:
    agree("""
pairs = []
for i in range(3):
    for j in range(3):
        if j > i:
            break
        pairs.append((i, j))
""", "pairs")

"""Generators run as in Python (interpret/generators.py): a call makes a generator object and
runs none of the body; iterating it (`for`, `list()`, unpacking, `next()`, `yield from`,
`itertools.chain`/`pairwise`) gives what it yields, once. Each program runs in CPython and
through the interpreter: every value the interpreter claims is CPython's, and it claims the
ones a kernel's epilogue needs. (tests/test_python_differential.py runs generated programs with
generators too.)"""

from __future__ import annotations

import textwrap

import pytest

from python_programs import HEADER, Tally, check_program, run_interpreter
from wgmma_lsp.interpret.values import Const, TupleVal

PROGRAMS = {
    "a call runs no body; iterating does, once": """
        log = []
        def g(n):
            log.append("ran")
            for i in range(n):
                yield i * 2
        made = g(3)
        before = list(log)
        first = list(made)
        second = list(made)
        after = list(log)
    """,
    "next, with and without a default": """
        def g(n):
            for i in range(n):
                yield i + 10
        it = g(2)
        a = next(it)
        b = next(it)
        c = next(it, "done")
        d = next(g(0), None)
        e = next(iter(g(3)))
    """,
    "two in flight (tokamax's epilogue)": """
        def tiles(n):
            for d in range(n):
                yield d, d * 64
        def two_in_flight(iterable):
            for a, _ in itertools.pairwise(itertools.chain(iterable, [None])):
                yield a
        pairs = list(two_in_flight(tiles(3)))
        acc_tiles = two_in_flight(tiles(2))
        ds, acc = next(acc_tiles)
        rest = [x for x in acc_tiles]
    """,
    "return ends it, yield from delegates": """
        def g(stop):
            yield 1
            if stop:
                return
            yield 2
        def outer():
            yield from g(False)
            yield from [7, 8]
            yield 9
        short = list(g(True))
        full = list(g(False))
        chained = tuple(outer())
        x, y = g(False)
    """,
    "memoised helpers return their own generator": """
        def g():
            yield 1
            yield 2
        def make():
            return g()
        one = list(make())
        two = list(make())
        shared = make()
        three = list(shared) + list(shared)
    """,
    "a comprehension and a loop consume it": """
        def evens(n):
            for i in range(n):
                if i % 2 == 0:
                    yield i
        doubled = [v * 2 for v in evens(7)]
        total = 0
        for v in evens(5):
            total += v
    """,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_generator_programs_have_cpythons_values(name: str) -> None:
    source = HEADER + textwrap.dedent(PROGRAMS[name])
    tally = Tally()
    wrong = check_program(source, tally)
    assert tally.raised == 0, "CPython raised: the program is broken"
    assert not wrong, "\n".join(wrong)
    assert tally.claims >= 4, tally  # the interpreter followed the generators


def _claimed(source: str) -> dict:
    got, _ = run_interpreter(HEADER + textwrap.dedent(source))
    return got


def test_the_values_an_epilogue_needs_are_claimed() -> None:
    got = _claimed(PROGRAMS["two in flight (tokamax's epilogue)"])
    assert isinstance(got["pairs"], TupleVal) and len(got["pairs"].items) == 3
    assert got["ds"] == Const(0) and got["acc"] == Const(0)
    assert isinstance(got["rest"], TupleVal) and len(got["rest"].items) == 1
    got = _claimed(PROGRAMS["a call runs no body; iterating does, once"])
    assert got["before"] == TupleVal((), True)  # no body ran at the call
    assert got["second"] == TupleVal((), True)  # exhausted


def test_yields_on_undecided_paths_claim_nothing() -> None:
    """A yield in one branch of an `if` the interpreter cannot decide: how many items there are
    is not known, so iterating claims nothing (never a guess)."""
    got = _claimed("""
        def g(flag):
            yield 1
            if flag:
                yield 2
        def run(flag):
            return list(g(flag))
        r = run(unknown_flag)
    """)
    assert not isinstance(got.get("r"), (TupleVal, Const))


def test_a_file_that_never_spells_yield_has_its_functions_called_unwalked(monkeypatch):
    """Whether a called function is a generator is read from its body once; a module whose text
    never spells `yield` (most kernel files) has none, and its bodies are not walked for it.
    A file that spells it anywhere, even in a comment, is walked as before."""
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.interpret import generators

    walked: list[str] = []
    real = generators.is_generator_function

    def counting(node):
        walked.append(node.name)
        return real(node)

    monkeypatch.setattr(generators, "is_generator_function", counting)
    plain = "def f(n):\n    return n + 1\n\nx = f(1)\n"
    analyze(plain, "/tmp/plain_module.py")
    assert walked == []
    analyze("# yield: none here\n" + plain, "/tmp/plain_module.py")
    assert walked == ["f"]
    gen = "def g(n):\n    yield n\n\nx = list(g(1))\n"
    analyze(gen, "/tmp/gen_module.py")
    assert walked[-1] == "g"  # (what it yields: the programs above, against CPython)

"""The interpreter runs Python as CPython does: CPython is the spec.

Generated pure-Python programs (tests/python_programs.py: arithmetic, comparisons, strings,
tuples, lists and dicts built and changed in place, `if`/`for`/`while`, comprehensions,
functions with defaults, `*args`/`**kwargs` and closures, and the classes kernel configs are
made of: dataclasses, NamedTuples, enums, plain classes with properties, inheritance and
`super()`) run in CPython and through the abstract interpreter as module code. Wherever the
interpreter claims a value for a module-level name (or a part of one: an item of a list, a value
of a dict), it must be CPython's. An unknown value claims nothing: that is allowed, a wrong one
is a bug. benchmarks/bench_python_differential.py runs many more and prints the counts.
"""

from __future__ import annotations

import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_programs import Tally, check_program, check_program_in_main, program_from_seed, programs

warnings.filterwarnings("ignore", category=SyntaxWarning)  # (`x is 1` in generated code)

SEEDED = 2_000  # programs from seeds: the bulk, quick to make
DRAWN = 50  # programs hypothesis draws choice by choice (a failure shrinks to a small program)
IN_MAIN = 300  # programs as the body of a main() the analysis runs as an entry point

_seeded = Tally()
_drawn = Tally()
_in_main = Tally()


@settings(max_examples=SEEDED, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1))
def test_seeded_programs_have_cpythons_values(seed: int) -> None:
    source = program_from_seed(seed)
    wrong = check_program(source, _seeded)
    assert not wrong, f"seed {seed}:\n{source}\n" + "\n".join(wrong)


@settings(max_examples=DRAWN, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_drawn_programs_have_cpythons_values(source: str) -> None:
    wrong = check_program(source, _drawn)
    assert not wrong, f"{source}\n" + "\n".join(wrong)


@settings(max_examples=IN_MAIN, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32 - 1))
def test_programs_as_an_entry_points_body_have_cpythons_values(seed: int) -> None:
    """The same programs inside `def main():` called from a `__main__` block: the whole analysis
    (module code, then main() as an entry point: memoised calls, sweeps over literal loops, the
    context's own objects); every value recorded for a name main binds once is CPython's."""
    source = program_from_seed(seed)
    wrong = check_program_in_main(source, _in_main)
    assert not wrong, f"seed {seed} (as main's body):\n{source}\n" + "\n".join(wrong)


def test_the_programs_ran_and_the_interpreter_claimed_values() -> None:
    """The two tests above compared something: most programs ran in CPython, and the
    interpreter claimed (and CPython agreed with) values in them (run after them, in file order)."""
    assert _seeded.programs >= SEEDED, _seeded
    assert _seeded.raised < _seeded.programs // 5, _seeded
    assert _seeded.claims > 3 * _seeded.programs and _seeded.agreements == _seeded.claims, _seeded
    assert _in_main.programs >= IN_MAIN and _in_main.claims > 3 * _in_main.programs, _in_main

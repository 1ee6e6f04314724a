"""The differential Python test at scale: generated programs through CPython and the interpreter.

Runs `--programs` programs (default 20,000; seeds 0, 1, 2, ... through
`tests/python_programs.program_from_seed`, with up to `--statements` top-level statements each)
(with `--main`: as the body of a `main()` a `__main__` block calls, through the whole analysis)
and prints how many ran in CPython, how many values the interpreter claimed (a known value, or
a known part of one: a list's length, an item, a dict's keys), how many agree with CPython, and
the first disagreements with their programs. CPython is the spec: every claim must agree; an
unknown value claims nothing. Prints numbers, exits 0 (the test is tests/test_python_differential.py).

    .venv/bin/python benchmarks/bench_python_differential.py
    .venv/bin/python benchmarks/bench_python_differential.py --programs 2000 --statements 8
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from python_programs import Tally, check_program, check_program_in_main, program_from_seed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=20_000)
    ap.add_argument("--statements", type=int, default=6)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=3, help="disagreeing programs to print")
    ap.add_argument("--main", action="store_true",
                    help="run each program as the body of main(), through the whole analysis")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    tally = Tally()
    shown = 0
    lines = 0
    start = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.programs):
        source = program_from_seed(seed, args.statements)
        lines += source.count("\n")
        wrong = (check_program_in_main if args.main else check_program)(source, tally)
        if wrong and shown < args.show:
            shown += 1
            print(f"--- seed {seed}: disagrees\n{source}" + "\n".join(wrong) + "\n")
    elapsed = time.perf_counter() - start
    ran = tally.programs - tally.raised
    print(f"programs: {tally.programs} ({lines} lines; {ran} ran in CPython, {tally.raised} raised)")
    print(f"values claimed by the interpreter: {tally.claims}")
    print(f"agreements with CPython: {tally.agreements}")
    print(f"disagreements: {len(tally.disagreements)}")
    print(f"time: {elapsed:.1f} s ({1000 * elapsed / max(tally.programs, 1):.2f} ms a program)")


if __name__ == "__main__":
    main()

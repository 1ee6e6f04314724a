"""Planted bugs in tokamax's Mosaic GPU kernels: how many of those JAX rejects wgmma-lsp reports.

The mutations and the harness live in tests/ (`tokamax_mutations.py`, `tokamax_harness.py`): small
edits of the installed tokamax files (read at run time, never copied into this repository), traced
and lowered by real JAX on the CPU with concrete configs, and analysed by wgmma-lsp. Prints every
mutant's two verdicts, then the recall per kernel file and in all: the share of the mutants JAX
rejects that wgmma-lsp reports at JAX's line with JAX's message. Target: 80%; and no error where
JAX accepts the mutant. `symb` marks an error of ours at JAX's line whose message is JAX's with
sizes left symbolic (not counted as a hit).

    .venv312/bin/python benchmarks/bench_tokamax_mutations.py [ID_SUBSTRING...]

tokamax 0.0.17 needs Python >= 3.12 (.venv312).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from tokamax_harness import skip_reason  # noqa: E402

TARGET = 0.80


def main(argv: list[str]) -> int:
    reason = skip_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    from tokamax_mutations import recall, report, run_all

    start = time.perf_counter()
    outcomes = run_all(argv)
    print(report(outcomes))
    by_file = defaultdict(list)
    for o in outcomes:
        by_file[o.mutation.id.split(":")[0]].append(o)
    print(f"\n{'kernel':20} {'mutants':>8} {'JAX rejects':>12} {'reported':>9} {'recall':>7} {'symbolic':>9}")
    for name, group in by_file.items():
        hit, rejected = recall(group)
        symb = sum(1 for o in group if o.rejected and not o.agrees and o.symbolic)
        print(f"{name:20} {len(group):8d} {rejected:12d} {hit:9d} {hit / max(1, rejected):7.0%} {symb:9d}")
    hit, rejected = recall(outcomes)
    rate = hit / max(1, rejected)
    false = sum(bool(o.false_errors) for o in outcomes)
    print(f"{'all':20} {len(outcomes):8d} {rejected:12d} {hit:9d} {rate:7.0%}"
          f"   target {TARGET:.0%}{'' if rate >= TARGET else ': below'}; false errors: {false}"
          f"   ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

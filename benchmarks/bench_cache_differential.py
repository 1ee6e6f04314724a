"""`check`'s result cache against no cache, on a package edited at random (differential).

Copies the `accpkg` fixture package (kernels, helper modules, configs, an import cycle) to a
temporary folder once per seed, then edits it step by step — a helper's dtype or tile size
changed, a module removed and put back, every file touched — and after each step runs `check`
with the cache and with `--no-cache`: their outputs must be equal. The suite runs one seed of
8 steps (tests/test_results_cache.py); this runs more.

    .venv/bin/python benchmarks/bench_cache_differential.py [--seeds 10] [--steps 12]

Prints the steps compared, how many distinct outputs they gave and the mismatches (each with
its seed and step); always exits 0.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_results_cache import edited_package_runs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    compared, mismatches, distinct = 0, [], set()
    for seed in range(args.seeds):
        tmp = Path(tempfile.mkdtemp(prefix="bench-cache-pkg-"))
        for step, served, analysed in edited_package_runs(tmp, cache, seed, args.steps):
            compared += 1
            distinct.add(analysed)
            if served != analysed:
                mismatches.append((seed, step))
                print(f"MISMATCH seed {seed} step {step}:\n--- cached\n{served[1]}\n--- analysed\n{analysed[1]}")
        shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    print(f"{compared} steps compared ({args.seeds} seeds x {args.steps}), {len(distinct)} distinct outputs, "
          f"{len(mismatches)} mismatches")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A big file analysed in pieces: is the error on its last lines found, and how long does it take?

Three files, each analysed once in this process (parse included), as the CLI analyses a file:

- `synthetic`: `benchmarks/synthetic.py` at `--lines` lines (default 50,000): realistic Hopper
  kernels, each block planting one of the seed errors. Every block's error must be reported,
  the last one included (before the step budget was per piece, a file this size lost the errors
  past ~33,000 lines and said nothing).
- `small-kernels`: the generated file of tests/test_incomplete_analysis.py (many small kernels,
  a WG001 planted at the end).
- `runaway`: the worst case for the time bound — every function spends a piece's whole step
  budget, so the file's budget (30 steps a line, `interpret/incomplete.py`) is what stops it:
  a WG904 says where.

Prints, per file: lines, CPU and wall seconds, interpreter steps against the file's budget, the
errors reported and the line of the last one (the file's end is reached), and the WG904 notes,
with the machine's load.

    .venv/bin/python benchmarks/bench_big_file.py [--lines 50000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

RUNAWAY = """

def runaway_{i}(a_ref, b_ref, o_ref):
  total = 0
  for a in range(8):
    for b in range(8):
      for c in range(8):
        for d in range(8):
          for e in range(8):
            for f in range(8):
              for g in range(8):
                total = total + a
"""


def _files(lines: int) -> dict[str, str]:
    import synthetic

    sys.path.insert(0, str(ROOT / "tests"))
    import test_incomplete_analysis as t

    bad, _ = t._planted_wg001()
    small = [t.HEADER]
    i = 0
    while sum(p.count("\n") for p in small) < lines - 20:
        small.append(t.SMALL.format(i=i))
        i += 1
    runaway = [t.HEADER] + [RUNAWAY.format(i=i) for i in range(max(1, lines // 14))]
    return {"synthetic": synthetic.generate(lines), "small-kernels": "".join(small) + "\n\n" + bad,
            "runaway": "".join(runaway)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000)
    args = parser.parse_args()
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics
    from wgmma_lsp.ide.model import Severity
    from wgmma_lsp.interpret import driver, incomplete

    made: list = []
    real = driver.Pieces
    driver.Pieces = lambda interp: made.append(interp) or real(interp)  # to read its step count
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'file':14} {'lines':>7} {'CPU s':>6} {'wall s':>6} {'steps':>10} {'budget':>10} "
          f"{'errors':>6} {'last error':>10} {'WG904':>5}")
    for name, source in _files(args.lines).items():
        made.clear()
        n_lines = source.count("\n") + 1
        cpu, wall = time.process_time(), time.perf_counter()
        analysis = analyze(source, f"{name}.py")
        diags = diagnostics(analysis)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        errors = [d for d in diags if d.severity == Severity.ERROR]
        last = max((d.span.line + 1 for d in errors), default=0)
        notes = [d for d in diags if d.code == "WG904"]
        print(f"{name:14} {n_lines:>7,} {cpu:>6.1f} {wall:>6.1f} {made[0].steps:>10,} "
              f"{incomplete.file_steps(n_lines):>10,} {len(errors):>6} {last:>10,} {len(notes):>5}")
        for d in notes[:2]:
            print(f"    {name}.py:{d.span.line + 1}: WG904 {d.message}")


if __name__ == "__main__":
    main()

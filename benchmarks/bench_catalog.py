"""The Mosaic GPU error catalog on the installed JAX: rules, catalog rows caught, fixtures per rule.

    .venv/bin/python benchmarks/bench_catalog.py       # JAX 0.10
    .venv312/bin/python benchmarks/bench_catalog.py    # JAX 0.12

Re-derives every row (scripts/gen_coverage.py, tests/catalog_harness.py: each trigger through real
JAX on the CPU and through wgmma-lsp), prints the counts and the time it took, and whether
docs/coverage.md's section for this JAX is current. Prints; asserts nothing.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_coverage  # noqa: E402
from catalog_harness import FIXTURES, jax_label  # noqa: E402
from jax_oracle import expectations  # noqa: E402
from wgmma_lsp.rules.registry import RULES  # noqa: E402


def main() -> int:
    t0 = time.perf_counter()
    results = gen_coverage.derive()
    took = time.perf_counter() - t0
    section = gen_coverage.section(results)
    minor = ".".join(jax_label().split(".")[:2])
    doc = gen_coverage.COVERAGE.read_text(encoding="utf-8")
    m = re.search(re.escape(gen_coverage._begin(minor)) + ".*?" + re.escape(gen_coverage._end(minor)), doc, re.DOTALL)
    per_rule = Counter(code for p in FIXTURES.rglob("*.py") for _, code, _ in expectations(p.read_text()))
    print(f"jax {jax_label()}: {len(RULES)} rules; catalog re-derived in {took:.1f} s")
    for line in section.splitlines():
        if line.startswith("- "):
            print("  " + line[2:].replace("**", ""))
    print(f"  docs/coverage.md section for jax {minor}: "
          f"{'current' if m and m.group(0) == section else 'STALE (run scripts/gen_coverage.py)'}")
    without = sorted(c for c in RULES if per_rule[c] == 0)
    print(f"  fixture lines per rule (`# E:` for this JAX): median {sorted(per_rule[c] for c in RULES)[len(RULES) // 2]}, "
          f"rules with none: {len(without)} ({', '.join(without)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

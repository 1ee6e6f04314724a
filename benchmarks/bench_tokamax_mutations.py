"""Planted bugs in tokamax's Mosaic GPU kernels: how many of those JAX rejects wgmma-lsp reports.

The mutations and the harness live in tests/ (`tokamax_mutations.py`, `tokamax_harness.py`): small
edits of the installed tokamax files (read at run time, never copied into this repository), traced
and lowered by real JAX on the CPU with concrete configs, and analysed by wgmma-lsp. Prints every
mutant's two verdicts, then the recall per kernel file and in all: the share of the mutants JAX
rejects that wgmma-lsp reports at JAX's line with JAX's message. Target: 80%; and no error where
JAX accepts the mutant. `symb` marks an error of ours at JAX's line whose message is JAX's with
sizes left symbolic (not counted as a hit).

    .venv312/bin/python benchmarks/bench_tokamax_mutations.py [--opened [--sweeps-all]] [ID_SUBSTRING...]

`--opened` also measures what an author sees with the mutant opened as it is, without the
harness (the file's own contexts: its package's tests, its configs): the share of the mutants
JAX rejects (in the harness's configs) that get an error or warning at JAX's line with JAX's
message (`exact`), or with JAX's message for other or symbolic sizes (`sizes`: a test's shapes
are not the harness's), and how many of those are errors. Other errors are listed, not counted as false:
they may be proven in a config the harness does not run. `--sweeps-all` analyses the opened
mutants as `wgmma-lsp check` does (every test case and sweep combination), not within the
editor's typing budget.

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
    opened = "--opened" in argv
    outcomes = run_all([a for a in argv if not a.startswith("-")])
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
    follow = sum(bool(o.follow_ons) for o in outcomes)
    print(f"{'all':20} {len(outcomes):8d} {rejected:12d} {hit:9d} {rate:7.0%}"
          f"   target {TARGET:.0%}{'' if rate >= TARGET else ': below'}; false errors: {false};"
          f" errors after JAX's first: {follow}"
          f"   ({time.perf_counter() - start:.0f} s)")
    if opened:
        from wgmma_lsp.interpret.sweep_budget import sweep_mode

        # `--sweeps all`: as `wgmma-lsp check` (and the server once a file is saved) analyses it
        with sweep_mode("all" if "--sweeps-all" in argv else None):
            as_opened(outcomes)
    return 0


def as_opened(outcomes: list) -> None:
    """The mutants JAX rejects, as an author sees them opened without the harness: reported at
    JAX's line with JAX's message (`exact`), or with JAX's message for other or symbolic sizes
    (`float32[config.block_m, 128]`, `tokamax_mutations.symbolic_match`) (`sizes`: the
    file's own contexts, a test's shapes, are not the harness's config), or not (`miss`)."""
    import re

    from shipped_harness import first_line
    from tokamax_mutations import opened_findings, symbolic_match

    def shape_free(text: str) -> str:
        return re.sub(r"\d+", "N", text)

    by_file: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    print("\nas opened (no harness):")
    for o in outcomes:
        if not o.rejected:
            continue
        seen = opened_findings(o.mutation)
        exact = [(r, err) for r, err in seen if o._confirmed(r)]
        sizes = [(r, err) for r, err in seen if not exact and any(
            j[0] in (r.line, r.blame_line, None)
            and (shape_free(first_line(r.jax_text or r.message)) == shape_free(j[1])
                 or symbolic_match(first_line(r.jax_text or r.message), j[1]))
            for j in o.jax_all)]
        hits = exact or sizes
        counts = by_file[o.mutation.id.split(":")[0]]
        counts[0] += 1
        counts[1] += bool(exact)
        counts[2] += bool(sizes)
        counts[3] += any(err for _, err in hits)
        kind = "exact" if exact else "sizes" if sizes else "miss"
        severity = ("error" if any(err for _, err in hits) else "warning") if hits else ""
        print(f"  {kind:6} {severity:8} {o.mutation.id:44} JAX {o.jax[0]}: {o.jax[1][:60]}")
        for r, err in seen:
            if (r, err) not in hits and err:
                print(f"           other error {r.line}: {r.code} {r.message[:70]}")
    print(f"\n{'kernel':20} {'JAX rejects':>12} {'exact':>6} {'sizes':>6} {'as errors':>10}")
    total = [0, 0, 0, 0]
    for name, counts in by_file.items():
        print(f"{name:20} {counts[0]:12d} {counts[1]:6d} {counts[2]:6d} {counts[3]:10d}")
        total = [t + c for t, c in zip(total, counts)]
    print(f"{'all':20} {total[0]:12d} {total[1]:6d} {total[2]:6d} {total[3]:10d}   "
          f"(at JAX's line: {(total[1] + total[2]) / max(1, total[0]):.0%}; exact {total[1] / max(1, total[0]):.0%})")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

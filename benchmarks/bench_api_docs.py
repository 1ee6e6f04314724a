"""The API documentation in hovers and signature help: what it costs, in this process.

* read   -- the first documentation of each API the rules name (ide/api_docs.py: parsing its
            defining module of the analysed JAX), and the same again from the per-installation
            cache;
* hover  -- a hover on each `plgpu.wgmma` callee of the synthetic benchmark file (the docs, the
            arguments' avals, the verdicts), the analysis done beforehand;
* typing -- signature help at the end of a half-typed `plgpu.wgmma(acc_ref, ` line inserted in
            the same file (the scan, the imports, the docs), answered from the earlier analysis.

Prints milliseconds (p50 / max). Not a test: it never fails on speed.

    .venv/bin/python benchmarks/bench_api_docs.py [--lines N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide import api_docs, api_help
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.signature_help import signature_help
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.rules.registry import RULES


def ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1e3:.2f} ms, max {max(samples) * 1e3:.2f} ms (n={len(samples)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args()
    root, version = jax_source._jax_root_and_version()
    print(f"jax {version} at {root}")

    names = sorted({a for r in RULES.values() for a in r.apis})
    api_docs.forget()
    cold, warm = [], []
    for name in names:
        t = time.perf_counter()
        api_docs.api_doc(name)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        api_docs.api_doc(name)
        warm.append(time.perf_counter() - t)
    documented = sum(api_docs.api_doc(n) is not None for n in names)
    print(f"read:   {len(names)} APIs named by rules, {documented} documented; first {ms(cold)}; cached {ms(warm)}")

    source = synthetic.generate(args.lines)
    analysis = analyze(source, "synthetic.py")
    lines = source.splitlines()
    calls = [(i, ln.index("plgpu.wgmma(") + 7) for i, ln in enumerate(lines) if "plgpu.wgmma(" in ln]
    hover(analysis, 0, 0)  # the records, built on the first hover whatever it is on
    hovers = []
    for line, col in calls:
        t = time.perf_counter()
        hover(analysis, line, col)
        hovers.append(time.perf_counter() - t)
    print(f"hover:  {len(lines)} lines, {len(calls)} plgpu.wgmma calls: {ms(hovers)}")

    typing = []
    for line, _ in calls:
        typed = lines[line][:lines[line].index("plgpu.wgmma(")] + "plgpu.wgmma(acc_ref, "
        text = "\n".join([*lines[:line + 1], typed, *lines[line + 1:]])
        t = time.perf_counter()
        help_ = signature_help(text, line + 1, len(typed), analysis, current=False)
        typing.append(time.perf_counter() - t)
        assert help_ is not None and help_.active_parameter == 1
    print(f"typing: signature help on a half-typed line, {ms(typing)}")
    print(f"constraints listed for plgpu.wgmma: {len(api_help.constraints('plgpu.wgmma'))}")


if __name__ == "__main__":
    main()

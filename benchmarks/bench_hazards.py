"""What the static race analysis (WG2xx, wgmma_lsp/hazards/) adds to a kernel file's analysis time.

Each file is analysed `--repeat` times with the hazard analysis on and off
(`wgmma_lsp.hazards.log.ENABLED`: off, no kernel log is opened, calls inside kernels are memoised
as before, nothing is analysed at the kernel's end), alternating, in this process; the median CPU
time of each is printed, with the ratio and the machine's load. Files: the installed jax's
Mosaic GPU kernels with the test harness's concrete entry points (tests/shipped_harness.py),
tokamax's Mosaic GPU kernels when tokamax is installed, and the race fixtures
(tests/fixtures/races), or the files named.

    .venv312/bin/python benchmarks/bench_hazards.py [--repeat 5] [FILE ...]

Target (issue 19): at most 20% added. Prints numbers; never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def default_files() -> list[tuple[Path, str]]:
    from shipped_harness import shipped_kernel_files, with_harness

    out = [(p, with_harness(p.read_text(), p.name)) for p in shipped_kernel_files()]
    try:
        import importlib.util

        spec = importlib.util.find_spec("tokamax")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin is not None:
        out += [(p, p.read_text()) for p in sorted(Path(spec.origin).parent.rglob("pallas_mosaic_gpu*.py"))]
    out += [(p, p.read_text()) for p in sorted((ROOT / "tests/fixtures/races").rglob("*.py"))]
    return out


def cpu_time(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.hazards import log

    files = [(p, p.read_text()) for p in args.files] or default_files()
    total_on = total_off = 0.0
    print(f"load average {os.getloadavg()[0]:.2f}; median CPU seconds of {args.repeat} runs each")
    print(f"{'file':48s} {'off':>8s} {'on':>8s} {'added':>7s}")
    for path, source in files:
        analyze(source, str(path))  # warm caches (JAX facts, the program's modules)
        on, off = [], []
        for _ in range(args.repeat):
            log.ENABLED = False
            off.append(cpu_time(lambda: analyze(source, str(path))))
            log.ENABLED = True
            on.append(cpu_time(lambda: analyze(source, str(path))))
        m_on, m_off = statistics.median(on), statistics.median(off)
        total_on += m_on
        total_off += m_off
        added = (m_on - m_off) / m_off * 100 if m_off else 0.0
        print(f"{path.name[:48]:48s} {m_off:8.3f} {m_on:8.3f} {added:6.1f}%")
    added = (total_on - total_off) / total_off * 100 if total_off else 0.0
    print(f"{'total':48s} {total_off:8.3f} {total_on:8.3f} {added:6.1f}%  (target: at most 20% added)")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Memory over many analyses: in process, and in a real server over LSP.

In process: `--analyses` (default 10,000) analyses of seeded typing-like edits (`fuzz_edits`)
of every kernel file shipped in jax, `examples/seed_errors.py` and the 1,000-line synthetic file,
each as the server does it (analysis, diagnostics, hover records), on a pool of worker threads
like the server's. Printed at intervals: RSS, Python's traced memory (`tracemalloc`, started
after a warm-up), glibc's heap in use / free-but-kept (`mallinfo2`) and the sizes of the caches.

Over LSP: `--lsp-edits` (default 1,000) full-text `didChange`s of the 1,000-line synthetic file,
each followed by a hover, sent to `memory_probe.py` (the real server plus a probe request);
printed at intervals: the server's RSS, traced memory, heap and caches.

"Flat" means: traced memory does not grow beyond the caches' stated bounds once they are full
(what the analyses hold is bounded), and RSS follows it. Exits 0 always (not a test); the suite's
`tests/test_memory.py` counts objects and traced bytes instead.

    python benchmarks/bench_memory.py [--analyses N] [--lsp-edits N] [--seed S] [--no-tracemalloc]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from fuzz_edits import mutate  # noqa: E402
from memory_probe import PROBE, mallinfo, probe, rss_kib  # noqa: E402
from synthetic import generate  # noqa: E402

MIB = 1024 * 1024


def inputs() -> list[tuple[str, str]]:
    from bench_analysis import shipped_kernel_dir

    out = []
    d = shipped_kernel_dir()
    if d is not None:
        out += [(str(p), p.read_text(encoding="utf-8")) for p in sorted(d.glob("*.py")) if p.name != "__init__.py"]
    seed = HERE.parent / "examples" / "seed_errors.py"
    out.append((str(seed), seed.read_text(encoding="utf-8")))
    out.append(("/tmp/wgmma_lsp_memory_synthetic.py", generate(1000)))
    return out


def analyse_like_the_server(text: str, path: str) -> None:
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics

    a = analyze(text, path, cancel=None)
    diagnostics(a)
    a.records  # the hover pass, as the first hover runs it


def fmt_heap(m: dict[str, int]) -> str:
    if not m:
        return "heap ?"
    return f"heap {m['uordblks'] / MIB:6.1f} used {m['fordblks'] / MIB:6.1f} free"


def in_process(count: int, seed: int, threads: int, trace: bool, server_gc: bool = True,
               samples: int = 10) -> dict:
    files = inputs()
    rng = random.Random(seed)
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wgmma-analysis")

    def batch(n: int) -> None:
        jobs = []
        for i in range(n):
            path, text = files[rng.randrange(len(files))]
            jobs.append(pool.submit(analyse_like_the_server, mutate(text, rng), path))
            if len(jobs) >= threads:
                for j in jobs:
                    j.result()
                jobs = []
        for j in jobs:
            j.result()

    warm = min(200, max(count // 10, 1))
    batch(warm)  # every bounded cache filled, jedi-free imports resolved
    if server_gc:  # the server's collector settings (thresholds raised, start-up heap frozen)
        from wgmma_lsp.server import configure_gc

        gc.collect()
        configure_gc()
    gc.collect()
    if trace:
        tracemalloc.start()
    rows = []
    t0 = time.perf_counter()
    step = max(count // samples, 1)
    done = 0
    while done < count:
        n = min(step, count - done)
        batch(n)
        done += n
        p = probe()
        rows.append({"analyses": done, **p})
        print(f"  {done:6d} analyses  RSS {p['rss_kib'] / 1024:7.1f} MB  "
              + (f"traced {p['traced'] / MIB:7.2f} MB  " if trace else "")
              + f"{fmt_heap(p['mallinfo'])}  gc objects {p['objects_tracked']:8d}  "
              f"{time.perf_counter() - t0:6.0f} s", flush=True)
    gc.collect()
    final = probe()
    if trace:
        final["traced_after_collect"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    pool.shutdown()
    return {"warm": warm, "rows": rows, "final": final}


class ProbeClient:
    """The raw stdio client of the tests, talking to `memory_probe.py` instead of the server."""

    def __new__(cls):  # type: ignore[misc]
        from raw_lsp import RawClient

        client = RawClient.__new__(RawClient)
        import tempfile

        client.log = tempfile.TemporaryFile()
        client.proc = subprocess.Popen([sys.executable, str(HERE / "memory_probe.py")], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=client.log)
        client.fd = client.proc.stdout.fileno()
        client.buf = b""
        client.notifications = []
        client.next_id = 1000
        return client


def over_lsp(edits: int, seed: int, trace: bool, samples: int = 10) -> dict:
    source = generate(1000)
    uri = "file:///tmp/wgmma_lsp_memory_lsp.py"
    rng = random.Random(seed)
    client = ProbeClient()
    rows = []
    try:
        client.initialize()
        client.open(uri, source)
        client.hover(uri, 0, 0, timeout=120)
        client.notifications.clear()

        def sample(i: int, collect: bool = False) -> dict:
            # tracemalloc starts at the first sample (after the first analysis), one frame deep
            p = client.request(PROBE, {"collect": collect, "trace": 1 if trace else 0}, timeout=120)["result"]
            row = {"edits": i, **p}
            print(f"  {i:6d} edits     RSS {p['rss_kib'] / 1024:7.1f} MB  "
                  + (f"traced {p['traced'] / MIB:7.2f} MB  " if "traced" in p else "")
                  + f"{fmt_heap(p['mallinfo'])}  gc objects {p['objects_tracked']:8d}"
                  + ("  (after gc.collect())" if collect else ""), flush=True)
            return row

        rows.append(sample(0))
        step = max(edits // samples, 1)
        t0 = time.perf_counter()
        for i in range(1, edits + 1):
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": i + 1},
                                                     "contentChanges": [{"text": mutate(source, rng)}]})
            client.hover(uri, 0, 0, timeout=120)
            client.notifications.clear()
            if i % step == 0 or i == edits:
                rows.append(sample(i))
        rows.append(sample(edits, collect=True))
        rows[-1]["seconds"] = time.perf_counter() - t0
        client.close()
    finally:
        client.kill()
    return {"rows": rows, "stderr_tail": client.stderr()[-2000:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--analyses", type=int, default=10_000, help="in-process analyses (0: skip)")
    ap.add_argument("--lsp-edits", type=int, default=1_000, help="edits sent to a real server (0: skip)")
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--threads", type=int, default=2, help="analysis threads in process (the server's pool)")
    ap.add_argument("--no-tracemalloc", action="store_true", help="RSS only (tracemalloc slows allocation)")
    ap.add_argument("--default-gc", action="store_true",
                    help="in process: Python's default collector settings instead of the server's")
    ap.add_argument("--json", type=Path, help="write every sample here")
    args = ap.parse_args()
    trace = not args.no_tracemalloc
    report: dict = {"seed": args.seed}
    if args.analyses:
        print(f"in process: {args.analyses} analyses on {args.threads} threads, "
              f"{'default' if args.default_gc else 'the server' + chr(39) + 's'} collector settings "
              f"(RSS at start {rss_kib() / 1024:.1f} MB)")
        report["in_process"] = in_process(args.analyses, args.seed, args.threads, trace,
                                          server_gc=not args.default_gc)
    if args.lsp_edits:
        print(f"over LSP: {args.lsp_edits} full-text edits of the 1,000-line file, a hover after each")
        report["lsp"] = over_lsp(args.lsp_edits, args.seed, trace)
    print()
    for key, unit in (("in_process", "analyses"), ("lsp", "edits")):
        rows = report.get(key, {}).get("rows")
        if not rows:
            continue
        first, last = rows[0], rows[-1]
        line = (f"{key.replace('_', ' ')}: RSS {first['rss_kib'] / 1024:.1f} -> {last['rss_kib'] / 1024:.1f} MB "
                f"from {first[unit]} to {last[unit]} {unit}")
        if "traced" in first and "traced" in last:
            line += f"; traced {first['traced'] / MIB:.2f} -> {last['traced'] / MIB:.2f} MB"
        print(line)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

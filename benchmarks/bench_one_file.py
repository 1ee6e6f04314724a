"""One-file `wgmma-lsp check` CPU time against `ruff check --select ALL` on the same file.

What a pre-commit hook pays per commit. Each command runs in a fresh process, as a user runs
it (interpreter start-up and the import of wgmma-lsp included), `--repeat` times; the CPU time
(user + system, of the process and its children) is the median over the runs. The machine's
load average is printed with every row: on a shared machine CPU time varies less than wall time,
but still grows with the load (caches, frequency).

The files: the installed jax's `hopper_matmul_mgpu.py` (a 330-line Mosaic GPU kernel) and
`examples/seed_errors.py`, or the files named. ruff must be installed in the same environment
(`pip install ruff`); without it the script says so and prints wgmma-lsp's numbers alone.
A first, unmeasured run of each command warms the OS cache and writes the bytecode cache
(`PYTHONDONTWRITEBYTECODE` is unset for the runs: an installed package has its .pyc files).

    .venv/bin/python benchmarks/bench_one_file.py [--repeat 7] [FILE ...]

To measure another checkout with the same environment (a git worktree), put it first on the path:
`PYTHONPATH=/path/to/checkout .venv/bin/python /path/to/checkout/benchmarks/bench_one_file.py`
(the runs inherit the environment, and `PYTHONPATH` comes before the editable install's finder).

Three rows per file: `analysed`, every run analysing the file in its own process
(`wgmma-lsp check --no-cache` against `ruff check --no-cache`: a pre-commit hook on a changed
file); `daemon`, the same command with a check daemon running (`wgmma-lsp daemon start`, in a
runtime folder of this benchmark's): the CPU of the `check` process plus the daemon's during the
run — the forked process that analysed the file and the daemon's own (`daemon status`); and
`cached`, both tools with their result cache filled by the warm-up run (wgmma-lsp's in a temporary
cache directory, ruff's with `--cache-dir`: a re-run on a file nobody changed). The JAX facts
cache is warm in every row (the warm-up run fills it). The `analysed` and `cached` rows never use
a daemon (`WGMMA_LSP_NO_DAEMON=1`).

Prints a verdict against the target (issue 16: within 10x ruff's CPU) per row; never fails,
exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 10.0
ROOT = Path(__file__).resolve().parent.parent


def default_files() -> list[Path]:
    import importlib.util

    out = []
    spec = importlib.util.find_spec("jax")
    if spec is not None and spec.origin is not None:
        f = Path(spec.origin).parent / "experimental/pallas/ops/gpu/hopper_matmul_mgpu.py"
        if f.is_file():
            out.append(f)
        else:
            print(f"not found in the installed jax: {f}", file=sys.stderr)
    else:
        print("jax is not installed: hopper_matmul_mgpu.py is not measured", file=sys.stderr)
    out.append(ROOT / "examples" / "seed_errors.py")
    return out


def run_cpu(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `cmd` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def median_cpu(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, float, float]:
    """Median CPU and wall seconds over `repeat` runs (after one warm-up), and the 1-minute load
    average at the end."""
    run_cpu(cmd, env)
    runs = [run_cpu(cmd, env) for _ in range(repeat)]
    return (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs),
            os.getloadavg()[0])


class Daemon:
    """`wgmma-lsp daemon start` in a runtime folder of its own; the CPU of a run through it is the
    asking process' (as measured above) plus what the daemon spent meanwhile: its forked check's
    (reaped before it is read) and its own (accepting, forking, the `status` read itself)."""

    def __init__(self, wgmma_cmd: list[str], env: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="wl-bench-", dir="/tmp")  # short: a socket's path
        self.env = dict(env, WGMMA_LSP_RUNTIME_DIR=self.folder)
        self.cmd = wgmma_cmd
        start = subprocess.run(self.cmd + ["daemon", "start"], env=self.env, capture_output=True, text=True)
        if start.returncode != 0:
            raise RuntimeError(f"daemon start failed: {start.stderr}")

    def status(self) -> dict:
        while True:
            run = subprocess.run(self.cmd + ["daemon", "status", "--json"], env=self.env,
                                 capture_output=True, text=True)
            status = json.loads(run.stdout)
            if not status.get("running"):  # every check reaped: its CPU counted
                return status
            time.sleep(0.01)

    def median_cpu(self, cmd: list[str], repeat: int) -> tuple[float, float]:
        run_cpu(cmd, self.env)
        before = self.status()
        runs = []
        for _ in range(repeat):
            ours, _ = run_cpu(cmd, self.env)
            after = self.status()
            if after["served"] != before["served"] + 1:
                raise RuntimeError("a check was not served by the daemon")
            runs.append(ours + after["cpu_checks"] - before["cpu_checks"] + after["cpu_self"] - before["cpu_self"])
            before = after
        return statistics.median(runs), os.getloadavg()[0]

    def stop(self) -> None:
        subprocess.run(self.cmd + ["daemon", "stop"], env=self.env, capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def find_ruff() -> str | None:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.is_file() else shutil.which("ruff")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=7, help="measured runs per command (default 7)")
    args = parser.parse_args()
    files = args.files or default_files()
    caches = tempfile.mkdtemp(prefix="bench-one-file-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["WGMMA_LSP_CACHE_DIR"] = os.path.join(caches, "wgmma-lsp")
    wgmma = Path(sys.executable).parent / "wgmma-lsp"
    wgmma_cmd = [str(wgmma)] if wgmma.is_file() else [sys.executable, "-m", "wgmma_lsp"]
    ruff = find_ruff()
    if ruff is None:
        print("ruff is not installed (pip install ruff into this environment): wgmma-lsp alone",
              file=sys.stderr)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"python {sys.version.split()[0]}, cores: {cores}, runs per command: {args.repeat} (median)")
    print(f"{'file':28} {'lines':>5} {'mode':>8} {'wgmma CPU ms':>12} {'load':>5} {'ruff CPU ms':>11}"
          f" {'load':>5} {'ratio':>6}  target")
    daemon = Daemon(wgmma_cmd, env) if hasattr(os, "fork") else None
    local = dict(env, WGMMA_LSP_NO_DAEMON="1")  # (a daemon the user runs is not asked)
    try:
        for f in files:
            measure(f, wgmma_cmd, ruff, local, daemon, caches, args.repeat)
    finally:
        if daemon is not None:
            daemon.stop()
    shutil.rmtree(caches, ignore_errors=True)
    return 0


def measure(f: Path, wgmma_cmd: list[str], ruff: str | None, env: dict[str, str], daemon: Daemon | None,
            caches: str, repeat: int) -> None:
    lines = len(f.read_text(encoding="utf-8", errors="replace").splitlines())
    for mode in ("analysed", "daemon", "cached"):
        if mode == "daemon" and daemon is None:
            continue
        ours_flags = ["--no-cache"] if mode != "cached" else []
        ruff_flags = ["--no-cache"] if mode != "cached" else ["--cache-dir", os.path.join(caches, "ruff")]
        command = wgmma_cmd + ["check", "--no-progress", *ours_flags, str(f)]
        if daemon is not None and mode == "daemon":
            ours, our_load = daemon.median_cpu(command, repeat)
        else:
            ours, _, our_load = median_cpu(command, env, repeat)
        row = f"{f.name[:28]:28} {lines:5d} {mode:>8} {ours * 1000:12.0f} {our_load:5.1f}"
        if ruff is not None:
            theirs, _, their_load = median_cpu(
                [ruff, "check", *ruff_flags, "--select", "ALL", "--quiet", str(f)], env, repeat)
            ratio = ours / theirs if theirs > 0 else float("inf")
            verdict = f"<= {TARGET_RATIO:.0f}x  [{'PASS' if ratio <= TARGET_RATIO else 'MISS'}]"
            row += f" {theirs * 1000:11.0f} {their_load:5.1f} {ratio:5.1f}x  {verdict}"
        print(row)


if __name__ == "__main__":
    sys.exit(main())

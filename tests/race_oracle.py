"""Ground truth for the static race rules (WG2xx): JAX's own dynamic race detector.

A race fixture defines `run(interpret=None)`, which launches its kernel with
`plgpu.kernel(..., interpret=interpret)`. `detect(path)` runs it in a fresh Python process (the
detector keeps global state, and a kernel that waits on a barrier nobody arrives on hangs) under
GPU interpret mode with `detect_races=True` on the CPU, and returns what the detector said: each
race as the pair of lines of the fixture its two accesses come from (JAX prints both: `read of
... from <thread>, path:line:col (fn)` / `write of ... , path:line:col (fn)`), whether
`get_races().races_found` was set, and the error the run ended with, if any.

The detector runs with `num_tma_threads_per_device=5` (jax 0.12's default): with jax 0.10's
default of one, every TMA copy shares one vector-clock entry, and a wait on any copy's barrier
orders the thread after every earlier copy (a wait on the wrong barrier goes unseen).

Which JAX runs is the interpreter of the test (`sys.executable`): jax 0.10's detector treats
SMEM->GMEM copies as synchronous and `commit_smem`/`wait_smem_to_gmem` as no-ops; jax 0.12's
models them. `detector_models(path)` reads the fixture's `# race-detector: >=0.12` line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_DRIVER = r'''
import contextlib, dataclasses, importlib.util, io, json, logging, sys
messages = []

class Keep(logging.Handler):
    def emit(self, record):
        text = record.getMessage()
        if "RACE DETECTED" in text:
            messages.append(text)

logging.getLogger().addHandler(Keep())
logging.getLogger().setLevel(logging.WARNING)
import jax
from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks
from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams
fields = {f.name for f in dataclasses.fields(InterpretGPUParams)}
kw = {"detect_races": True}
if "num_tma_threads_per_device" in fields:
    kw["num_tma_threads_per_device"] = 5  # jax 0.12's default; 0.10's (1) orders every copy after the last
if "on_race" in fields:
    kw["on_race"] = "warn"
for n, path in enumerate(sys.argv[1:]):
    messages.clear()
    spec = importlib.util.spec_from_file_location(f"race_fixture_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    error = matches = found = None
    printed = io.StringIO()  # jax 0.10's detector prints its reports
    try:
        with contextlib.redirect_stdout(printed):
            out = jax.block_until_ready(module.run(interpret=InterpretGPUParams(**kw)))
        if hasattr(module, "expected"):
            import numpy as np
            matches = bool(np.allclose(np.asarray(out), np.asarray(module.expected())))
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
    messages += ["RACE DETECTED" + m for m in printed.getvalue().split("RACE DETECTED")[1:]]
    try:
        found = bool(gpu_callbacks.get_races().races_found)
    except Exception as e:
        error = error or f"no detector state: {e}"
    gpu_callbacks.reset_gpu_interpret_mode_state()
    print("@@RACES@@" + json.dumps({"path": path, "messages": messages, "found": found, "error": error,
                                    "matches": matches}), flush=True)
'''


@dataclass(frozen=True)
class Detected:
    races: list[tuple[int, ...]]  # per race, the fixture's lines its accesses come from
    found: bool | None  # get_races().races_found
    error: str | None  # what the run raised (an unfinished copy, a hang cut by the timeout)
    matches: bool | None  # the output equals the fixture's `expected()` (None: not defined)

    def lines(self) -> set[int]:
        return {ln for race in self.races for ln in race}


def detect(path: Path, timeout: float = 240.0) -> Detected:
    """Run the fixture's kernel under JAX's race detector; the races it reports."""
    return detect_many([path], timeout)[path]


def detect_many(paths: list[Path], timeout: float = 1800.0) -> dict[Path, Detected]:
    """`detect` for many fixtures, one after the other in one process (the detector's state is
    reset between them). A fixture the run did not reach (a hang cut by the timeout, a crash)
    gets an error."""
    out: dict[Path, Detected] = {}
    try:
        proc = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, paths)], capture_output=True,
                              text=True, timeout=timeout, env=_env())
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = "timeout (a barrier that never completes?)"
    for line in stdout.splitlines():
        if not line.startswith("@@RACES@@"):
            continue
        data = json.loads(line[len("@@RACES@@"):])
        path = Path(data["path"])
        where = re.compile(re.escape(str(path)) + r":(\d+):\d+")
        races = [tuple(int(m) for m in where.findall(msg)) for msg in data["messages"]]
        out[path] = Detected(races, data["found"], data["error"], data["matches"])
    for path in paths:
        out.setdefault(path, Detected([], None, f"not run: {stderr[-2000:]}", None))
    return out


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.pop("WGMMA_LSP_STRICT", None)
    return env


def detector_models(source: str) -> str:
    """The JAX versions whose detector models a fixture's hazard: its `# race-detector:` line
    (">=0.12", "all", or "none": no JAX's detector sees it yet — a wgmma's reads of its SMEM
    operands have no vector clocks)."""
    m = re.search(r"^# race-detector: (\S+)", source, re.M)
    return m.group(1) if m else "all"


def detector_raises(source: str) -> str | None:
    """The error the detector's run must end with instead of a race (`# race-detector-raises:`):
    jax 0.12 checks at the end of each thread that no SMEM->GMEM copy is still reading."""
    m = re.search(r"^# race-detector-raises: (.+)$", source, re.M)
    return m.group(1).strip() if m else None


def expected_warnings(source: str) -> set[tuple[int, str]]:
    """`# R: WG2xx` comments: (1-based line, code) the analyzer must warn at."""
    out = set()
    for i, line in enumerate(source.splitlines(), 1):
        m = re.search(r"# R: (WG2\d\d)\b", line)
        if m:
            out.add((i, m.group(1)))
    return out

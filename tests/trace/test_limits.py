"""The sandbox: a time limit that kills the whole process group, a memory limit, cancellation."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from wgmma_lsp.settings import Settings
from wgmma_lsp.trace.check import request_for
from wgmma_lsp.trace.report import MEMORY_LIMIT, TIME_LIMIT, outcome_diagnostics
from wgmma_lsp.trace.runner import TraceProcess

from .conftest import FIXTURES


def _alive(pid: int) -> bool:
    """Whether a process still runs (a zombie waiting for its reaper does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return not any(ln.startswith("State:") and "Z" in ln.split()[1] for ln in f)
    except OSError:
        return False


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines()) if needle in ln)


def test_infinite_loop_at_import_is_stopped_by_the_time_limit() -> None:
    path = FIXTURES / "infinite_loop.py"
    request = request_for(path, path.read_text(), Settings(trace_timeout=5.0))
    proc = TraceProcess(request)
    start = time.monotonic()
    outcome = proc.wait()
    assert time.monotonic() - start < 12
    assert outcome.status == "timeout"
    assert proc.pid is not None and not _alive(proc.pid)
    [diag] = outcome_diagnostics(outcome)
    assert (diag.code, diag.name) == TIME_LIMIT
    assert "time limit of 5 s exceeded while" in diag.message
    assert "killed" in diag.message
    if "importing the module" in diag.message:  # not still importing jax on a loaded machine
        # the stack dumped just before the kill says where it looped
        assert diag.span.line in (_line_of(path, "for _ in"), _line_of(path, "pass"))


def test_memory_limit() -> None:
    path = FIXTURES / "memory_hog.py"
    request = request_for(path, path.read_text(), Settings(trace_memory_mb=1024, trace_timeout=30))
    outcome = TraceProcess(request).wait()
    [diag] = outcome_diagnostics(outcome)
    assert (diag.code, diag.name) == MEMORY_LIMIT
    assert "memory limit of 1024 MB" in diag.message
    assert diag.span.line == _line_of(path, "HOG = bytearray")


def test_kill_cancels_a_running_trace() -> None:
    path = FIXTURES / "infinite_loop.py"
    proc = TraceProcess(request_for(path, path.read_text(), Settings(trace_timeout=60)))
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("outcome", proc.wait()))
    thread.start()
    time.sleep(1.0)
    proc.kill()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert result["outcome"].status == "cancelled"
    assert outcome_diagnostics(result["outcome"]) == []
    assert not _alive(proc.pid)


def test_missing_interpreter_is_reported() -> None:
    path = FIXTURES / "marker_module.py"
    request = request_for(path, path.read_text(), Settings(trace_interpreter="/nonexistent/python"))
    outcome = TraceProcess(request).wait()
    assert outcome.status == "failed-to-start"
    [diag] = outcome_diagnostics(outcome)
    assert "/nonexistent/python" in diag.message


def test_worker_never_outlives_the_server() -> None:
    """A worker whose parent (the server) dies exits by itself, even inside an endless loop."""
    import subprocess
    import sys

    path = FIXTURES / "infinite_loop.py"
    parent = (  # a stand-in server: starts a worker the way the runner does, then dies
        "import json, subprocess, sys\n"
        "from pathlib import Path\n"
        "from wgmma_lsp.settings import Settings\n"
        "from wgmma_lsp.trace.check import request_for\n"
        "from wgmma_lsp.trace.runner import WORKER, worker_env\n"
        f"path = Path({str(path)!r})\n"
        "req = request_for(path, path.read_text(), Settings(trace_timeout=60))\n"
        "p = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,\n"
        "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,\n"
        "                     env=worker_env(), start_new_session=True)\n"
        "p.stdin.write(json.dumps(req.payload()).encode()); p.stdin.close()\n"
        "print(p.pid, flush=True)\n")
    out = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=30)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid)

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


def _wait_for_file(path: Path, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return int(path.read_text())
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def _gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    alive = [p for p in pids if _alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    return alive


def test_a_setsid_grandchild_dies_with_the_trace(tmp_path: Path, monkeypatch) -> None:
    """A process that leaves the worker's session and process group is still killed at the
    time limit: the supervisor is its subreaper."""
    pidfile = tmp_path / "escapee.pid"
    monkeypatch.setenv("WGMMA_TEST_PIDFILE", str(pidfile))
    path = FIXTURES / "setsid_grandchild.py"
    proc = TraceProcess(request_for(path, path.read_text(), Settings(trace_timeout=8.0)))
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("outcome", proc.wait()))
    thread.start()
    escapee = _wait_for_file(pidfile, 20)
    assert _alive(escapee)
    assert os.getsid(escapee) != os.getsid(proc.pid)  # it did leave the session
    thread.join(timeout=30)
    assert result["outcome"].status == "timeout"
    assert _gone([escapee, proc.pid]) == []


def test_nothing_survives_a_sigkilled_server(tmp_path: Path) -> None:
    """The server is killed with SIGKILL mid-trace: the supervisor sees its pipe close and kills
    the worker and the setsid grandchild."""
    import signal
    import subprocess
    import sys

    pidfile = tmp_path / "escapee.pid"
    path = FIXTURES / "setsid_grandchild.py"
    server = (  # a stand-in server running a trace the way the language server does
        "import sys, threading, time\n"
        "from pathlib import Path\n"
        "from wgmma_lsp.settings import Settings\n"
        "from wgmma_lsp.trace.check import request_for\n"
        "from wgmma_lsp.trace.runner import TraceProcess\n"
        f"path = Path({str(path)!r})\n"
        "proc = TraceProcess(request_for(path, path.read_text(), Settings(trace_timeout=120)))\n"
        "threading.Thread(target=proc.wait, daemon=True).start()\n"
        "while proc.pid is None: time.sleep(0.05)\n"
        "print(proc.pid, flush=True)\n"
        "time.sleep(600)\n")
    env = {**os.environ, "WGMMA_TEST_PIDFILE": str(pidfile)}
    stand_in = subprocess.Popen([sys.executable, "-c", server], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert stand_in.stdout is not None
        supervisor = int(stand_in.stdout.readline())
        escapee = _wait_for_file(pidfile, 30)
        from wgmma_lsp.trace.supervisor import descendants

        tree = [supervisor, *descendants(supervisor)]
        assert escapee in tree and len(tree) >= 3
        stand_in.send_signal(signal.SIGKILL)
        stand_in.wait()
        assert _gone(tree) == []
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()


def test_a_sigkilled_language_server_leaves_no_process(tmp_path: Path) -> None:
    """The real server, with its jedi helper running and a trace (with a setsid grandchild) in
    progress, is killed with SIGKILL: every process it started dies."""
    import signal
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from raw_lsp import RawClient

    from wgmma_lsp.trace.supervisor import descendants

    pidfile = tmp_path / "escapee.pid"
    path = FIXTURES / "setsid_grandchild.py"
    client = RawClient(env={"WGMMA_TEST_PIDFILE": str(pidfile)})
    try:
        client.initialize({"wgmmaLsp": {"trace": {"enabled": True, "timeout": 120}}})
        uri = path.resolve().as_uri()
        client.open(uri, path.read_text())
        seed = (FIXTURES / "seed_errors.py").resolve()
        text = seed.read_text()
        # A name the installed JAX's source does not document for the hover (ide/api_docs.py):
        # its documentation is looked up by jedi, in jedi's helper process.
        line = next(i for i, ln in enumerate(text.splitlines()) if "jax.ShapeDtypeStruct" in ln)
        client.open(seed.as_uri(), text)
        client.hover(seed.as_uri(), line, text.splitlines()[line].index("ShapeDtypeStruct") + 1)  # starts jedi
        escapee = _wait_for_file(pidfile, 60)
        deadline = time.monotonic() + 30
        tree = descendants(client.proc.pid)
        while time.monotonic() < deadline and not any("multiprocessing" in _cmdline(p) for p in tree):
            time.sleep(0.2)
            tree = descendants(client.proc.pid)
        assert escapee in tree
        assert any("supervisor.py" in _cmdline(p) for p in tree)
        assert any("multiprocessing" in _cmdline(p) for p in tree), [_cmdline(p) for p in tree]
        client.proc.send_signal(signal.SIGKILL)
        client.proc.wait()
        assert _gone(tree, 15) == [], [_cmdline(p) for p in tree if _alive(p)]
    finally:
        client.kill()


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""

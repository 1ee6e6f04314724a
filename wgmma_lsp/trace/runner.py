"""Runs the trace worker in a separate process with a time limit and a memory limit.

The worker (`worker.py`) is started as a script with the user's interpreter, under a small
supervisor (`supervisor.py`, the server's interpreter, standard library only) in a session of its
own. The supervisor is a child subreaper: every process the worker starts stays in its tree, even
one that calls `os.setsid()`, and it kills that whole tree when the trace ends, when told to
(the time limit, the memory limit, a cancellation) and when the server dies, even by SIGKILL (it
watches a pipe only the server holds). The memory limit is enforced twice: `RLIMIT_DATA` inside
the worker, and a watchdog here on the RSS of the whole tree. Nothing here imports JAX or user
code.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp.entry.declared import EntryPoint
from wgmma_lsp.trace.supervisor import descendants

WORKER = Path(__file__).with_name("worker.py")
SUPERVISOR = Path(__file__).with_name("supervisor.py")
STOP_GRACE = 3.0  # seconds the supervisor gets to kill its tree before its group is SIGKILLed
POLL_SECONDS = 0.1
STDERR_TAIL = 8000


@dataclass
class TraceRequest:
    """What to trace: a file's text (traced as if saved at `path`) and its entry points."""

    path: str
    source: str
    entries: list[EntryPoint]
    timeout: float = 60.0
    memory_mb: int = 4096
    interpreter: str | None = None
    lower: bool = True
    cwd: str | None = None

    def payload(self) -> dict:
        return {
            "path": self.path, "source": self.source, "lower": self.lower,
            "memory_mb": self.memory_mb,
            # leave the worker time to write its stacks before it is killed
            "dump_after": max(self.timeout - max(0.5, min(2.0, self.timeout * 0.1)), 0.1),
            # the worker's own backstop, should this process die before it can kill the worker
            "hard_deadline": self.timeout + 10.0,
            "parent_pid": os.getpid(),
            "entries": [{"id": i, "call": e.call, "expression": e.expression}
                        for i, e in enumerate(self.entries)],
        }


@dataclass
class TraceOutcome:
    """Everything the worker reported, plus how the process ended."""

    request: TraceRequest
    events: list[dict] = field(default_factory=list)
    status: str = "ok"  # ok | timeout | memory | crashed | cancelled | failed-to-start
    returncode: int | None = None
    stderr: str = ""
    elapsed: float = 0.0
    stage: dict | None = None  # the last "stage" event: what was running when it ended

    @property
    def import_error(self) -> dict | None:
        for ev in self.events:
            if ev.get("event") == "import":
                return ev.get("error")
        return None

    @property
    def entry_results(self) -> dict[int, dict]:
        return {ev["id"]: ev for ev in self.events if ev.get("event") == "entry"}

    @property
    def jax_version(self) -> str | None:
        for ev in self.events:
            if ev.get("event") == "hello":
                return ev.get("jax")
        return None


def default_interpreter() -> str:
    """The interpreter that runs the worker when the user names none: this one."""
    return sys.executable


def worker_env() -> dict[str, str]:
    """The worker's environment: the user's, forced to the CPU, without JAX's frame filtering."""
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"  # never initialise a GPU (and its huge reservations)
    env["JAX_TRACEBACK_FILTERING"] = "off"  # keep every frame: the blame needs them
    env.setdefault("MALLOC_ARENA_MAX", "2")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


def tree_rss_mb(root: int) -> float | None:
    """Resident memory of a process and all its descendants, in MiB (Linux), or None."""
    total = rss_mb(root)
    if total is None:
        return None
    for pid in descendants(root):
        total += rss_mb(pid) or 0.0
    return total


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MiB (Linux), or None if unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class TraceProcess:
    """One run of the worker. `wait()` blocks (run it in a thread); `kill()` may come from any thread."""

    def __init__(self, request: TraceRequest) -> None:
        self.request = request
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._reason: str | None = None  # set when we kill it: timeout | memory | cancelled
        self._watch: int | None = None  # write end of the pipe the supervisor watches

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def kill(self, reason: str = "cancelled") -> None:
        """Kill the worker and everything it started: the supervisor kills its whole tree."""
        with self._lock:
            if reason == "cancelled":
                self._cancelled = True
            if self._reason is None:
                self._reason = reason
            proc = self._proc
            self._close_watch()
        if proc is None or proc.poll() is not None:
            return
        try:
            if os.name == "posix":
                os.kill(proc.pid, signal.SIGTERM)
            else:  # pragma: no cover
                proc.kill()
        except (ProcessLookupError, PermissionError):
            pass

    def _close_watch(self) -> None:
        if self._watch is not None:
            try:
                os.close(self._watch)
            except OSError:
                pass
            self._watch = None

    def _command(self, interpreter: str) -> tuple[list[str], tuple[int, ...]]:
        """The supervisor's command line (POSIX) and the descriptors it inherits."""
        if os.name != "posix":  # pragma: no cover
            return [interpreter, str(WORKER)], ()
        read_end, self._watch = os.pipe()
        return ([sys.executable, str(SUPERVISOR), str(read_end), "--", interpreter, str(WORKER)],
                (read_end,))

    def wait(self) -> TraceOutcome:
        """Start the worker, feed it the request, collect its events until it ends or is killed."""
        req = self.request
        outcome = TraceOutcome(req)
        start = time.monotonic()
        interpreter = req.interpreter or default_interpreter()
        with tempfile.TemporaryFile() as err:
            with self._lock:
                if self._cancelled:
                    outcome.status = "cancelled"
                    return outcome
                if shutil.which(interpreter) is None:
                    outcome.status = "failed-to-start"
                    outcome.stderr = f"cannot start {interpreter}: not found or not executable"
                    return outcome
                command, fds = self._command(interpreter)
                try:
                    self._proc = subprocess.Popen(
                        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=err, cwd=req.cwd or os.path.dirname(os.path.abspath(req.path)),
                        env=worker_env(), start_new_session=True, pass_fds=fds)
                except OSError as e:
                    self._close_watch()
                    outcome.status = "failed-to-start"
                    outcome.stderr = f"cannot start {interpreter}: {e}"
                    return outcome
                finally:
                    for fd in fds:
                        os.close(fd)
            proc = self._proc
            lines: list[bytes] = []
            reader = threading.Thread(target=self._read, args=(proc, lines), daemon=True)
            reader.start()
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(req.payload()).encode("utf-8"))
                proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            deadline = start + req.timeout
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    self.kill("timeout")
                    break
                rss = tree_rss_mb(proc.pid)
                if rss is not None and rss > req.memory_mb:
                    self.kill("memory")
                    break
                try:
                    proc.wait(POLL_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
            with self._lock:
                self._close_watch()  # the trace is over: the supervisor kills what is left
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                pass
            if os.name == "posix":  # a supervisor that did not stop: its group goes at once
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            proc.wait()
            reader.join(timeout=5)
            outcome.returncode = proc.returncode
            err.seek(0, os.SEEK_END)
            size = err.tell()
            err.seek(max(0, size - STDERR_TAIL))
            outcome.stderr = err.read().decode("utf-8", errors="replace")
        for raw in lines:
            try:
                ev = json.loads(raw)
            except ValueError:
                continue
            if isinstance(ev, dict):
                outcome.events.append(ev)
                if ev.get("event") == "stage":
                    outcome.stage = ev
        outcome.elapsed = time.monotonic() - start
        done = any(ev.get("event") == "done" for ev in outcome.events)
        if self._reason is not None:
            outcome.status = self._reason
        elif not done:
            outcome.status = "crashed"
            if any(e.get("memory") for e in _errors(outcome)):
                outcome.status = "memory"
        return outcome

    @staticmethod
    def _read(proc: subprocess.Popen[bytes], lines: list[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)


def _errors(outcome: TraceOutcome) -> list[dict]:
    out = []
    for ev in outcome.events:
        if isinstance(ev.get("error"), dict):
            out.append(ev["error"])
    return out


def run_trace(request: TraceRequest) -> TraceOutcome:
    """Run one trace synchronously (the CLI's way)."""
    return TraceProcess(request).wait()


def format_signal(returncode: int | None) -> str:
    """`killed by SIGABRT` / `exit status 1` for a process's return code."""
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


__all__ = ["TraceRequest", "TraceOutcome", "TraceProcess", "run_trace", "format_signal"]

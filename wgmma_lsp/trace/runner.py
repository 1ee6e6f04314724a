"""Runs the trace worker in a separate process with a time limit and a memory limit.

The worker (`worker.py`) is started as a script with the user's interpreter, under a small
supervisor (`supervisor.py`, the server's interpreter, standard library only) in a session of its
own. Where the kernel allows it the worker runs in a PID namespace of its own (see
supervisor.py): it cannot signal the server or the supervisor, and everything it starts dies with
the namespace; otherwise the supervisor is a child subreaper and this runner also kills every
process it saw in the tree. Nothing the worker sends is trusted (protocol.py: bounded reads, a
schema), stderr keeps only its tail, the worker gets a temporary folder of its own (removed
after) and its /dev/shm files are removed (containment.py). The memory limit is enforced twice:
`RLIMIT_DATA` inside the worker, and a watchdog here on the PSS of the whole tree (shared pages
counted once). At most `trace.concurrency` traces run at once. Nothing here imports JAX or user
code.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp.entry.declared import EntryPoint
from wgmma_lsp.trace.containment import (SLOTS, SeenProcesses, clean_shm, private_tmpdir,
                                         remove_tree, shm_snapshot, tree_memory_mb)
from wgmma_lsp.trace.protocol import StreamReader, TailReader, parse_events
from wgmma_lsp.trace.supervisor import BANNER

WORKER = Path(__file__).with_name("worker.py")
SUPERVISOR = Path(__file__).with_name("supervisor.py")
STOP_GRACE = 3.0  # seconds the supervisor gets to kill its tree before its group is SIGKILLed
POLL_SECONDS = 0.1


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
    namespaces: bool = True  # False: the process-tree containment only (tests of the fallback)

    def payload(self) -> dict:
        return {
            "path": self.path, "source": self.source, "lower": self.lower,
            "memory_mb": self.memory_mb,
            # leave the worker time to write its stacks before it is killed
            "dump_after": max(self.timeout - max(0.5, min(2.0, self.timeout * 0.1)), 0.1),
            # the worker's own backstop, should this process die before it can kill the worker
            "hard_deadline": self.timeout + 10.0,
            "parent_pid": os.getpid(),  # a direct parent's check (the runner sends None)
            "entries": [{"id": i, "call": e.call, "expression": e.expression}
                        for i, e in enumerate(self.entries)],
        }


@dataclass
class TraceOutcome:
    """Everything the worker reported, plus how the process ended."""

    request: TraceRequest
    events: list[dict] = field(default_factory=list)
    status: str = "ok"  # ok | timeout | memory | crashed | cancelled | failed-to-start | flood
    returncode: int | None = None
    stderr: str = ""
    elapsed: float = 0.0
    stage: dict | None = None  # the last "stage" event: what was running when it ended
    containment: str = "unknown"  # "pid-namespace" | "process-tree (why)": the supervisor's banner
    leftovers: list[int] = field(default_factory=list)  # pids killed after the supervisor ended
    stderr_bytes: int = 0  # how much the process wrote on stderr (only the tail is kept)

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


def worker_env(tmpdir: str | None = None) -> dict[str, str]:
    """The worker's environment: the user's, forced to the CPU, without JAX's frame filtering,
    with a temporary folder of its own."""
    env = dict(os.environ)
    if tmpdir:
        env["TMPDIR"] = env["TMP"] = env["TEMP"] = tmpdir
    env["JAX_PLATFORMS"] = "cpu"  # never initialise a GPU (and its huge reservations)
    env["JAX_TRACEBACK_FILTERING"] = "off"  # keep every frame: the blame needs them
    env.setdefault("MALLOC_ARENA_MAX", "2")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


class TraceProcess:
    """One run of the worker. `wait()` blocks (run it in a thread); `kill()` may come from any thread."""

    def __init__(self, request: TraceRequest) -> None:
        self.request = request
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._reason: str | None = None  # set when we kill it: timeout | memory | cancelled
        self._watch: int | None = None  # write end of the pipe the supervisor watches
        self._cancel_event = threading.Event()  # ends a wait for a slot

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
                self._cancel_event.set()
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
        options = [str(read_end), "--shm-mb", str(self.request.memory_mb)]
        if not self.request.namespaces:
            options.append("--no-namespace")
        return ([sys.executable, str(SUPERVISOR), *options, "--", interpreter, str(WORKER)],
                (read_end,))

    def wait(self) -> TraceOutcome:
        """Wait for a slot (at most `traceConcurrency` traces at once), then run the worker."""
        outcome = TraceOutcome(self.request)
        if not SLOTS.acquire(self._cancel_event):
            outcome.status = "cancelled"
            return outcome
        try:
            return self._run(outcome)
        finally:
            SLOTS.release()

    def _run(self, outcome: TraceOutcome) -> TraceOutcome:
        """Start the worker, feed it the request, collect its events until it ends or is killed."""
        req = self.request
        start = time.monotonic()
        interpreter = req.interpreter or default_interpreter()
        with self._lock:
            if self._cancelled:
                outcome.status = "cancelled"
                return outcome
            if shutil.which(interpreter) is None:
                outcome.status = "failed-to-start"
                outcome.stderr = f"cannot start {interpreter}: not found or not executable"
                return outcome
            tmpdir = private_tmpdir()
            shm_before = shm_snapshot()
            command, fds = self._command(interpreter)
            try:
                self._proc = subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, cwd=req.cwd or os.path.dirname(os.path.abspath(req.path)),
                    env=worker_env(tmpdir), start_new_session=True, pass_fds=fds)
            except OSError as e:
                self._close_watch()
                remove_tree(tmpdir)
                outcome.status = "failed-to-start"
                outcome.stderr = f"cannot start {interpreter}: {e}"
                return outcome
            finally:
                for fd in fds:
                    os.close(fd)
        proc = self._proc
        seen = SeenProcesses()
        assert proc.stdout is not None and proc.stderr is not None
        out = StreamReader(os.dup(proc.stdout.fileno()), lambda: self.kill("flood"))
        err = TailReader(os.dup(proc.stderr.fileno()))
        proc.stdout.close()
        proc.stderr.close()
        out.thread.start()
        err.thread.start()
        try:
            assert proc.stdin is not None
            # no parent pid: the worker's parent is the supervisor's init, which it dies with
            proc.stdin.write(json.dumps({**req.payload(), "parent_pid": None}).encode("utf-8"))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        deadline = start + req.timeout
        while proc.poll() is None:
            if time.monotonic() > deadline:
                self.kill("timeout")
                break
            seen.record(proc.pid)
            used = tree_memory_mb(proc.pid)
            if used is not None and used > req.memory_mb:
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
        outcome.leftovers = seen.kill_survivors(proc.pid)
        out.thread.join(timeout=5)
        err.thread.join(timeout=5)
        outcome.returncode = proc.returncode
        banner = err.first_line.decode("utf-8", errors="replace")
        if banner.startswith(BANNER):
            outcome.containment = banner[len(BANNER):]
            outcome.stderr = err.tail.decode("utf-8", errors="replace")
        else:  # no banner: the supervisor never got that far
            outcome.stderr = (banner + "\n" + err.tail.decode("utf-8", errors="replace")).strip()
        outcome.stderr_bytes = err.total
        if outcome.containment != "pid-namespace":  # /dev/shm was the host's
            clean_shm(shm_before)
        remove_tree(tmpdir)
        outcome.events, outcome.stage = parse_events(out.lines, len(req.entries), req.source)
        outcome.elapsed = time.monotonic() - start
        done = any(ev.get("event") == "done" for ev in outcome.events)
        if self._reason is not None:
            outcome.status = self._reason
        elif not done:
            outcome.status = "crashed"
            if any(e.get("memory") for e in _errors(outcome)):
                outcome.status = "memory"
        return outcome


def _errors(outcome: TraceOutcome) -> list[dict]:
    out = []
    for ev in outcome.events:
        if isinstance(ev.get("error"), dict):
            out.append(ev["error"])
    return out


def set_concurrency(limit: int | None) -> None:
    """At most `limit` traces at once (None: the core count); the others wait their turn."""
    SLOTS.set_limit(limit or os.cpu_count() or 1)


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


__all__ = ["TraceRequest", "TraceOutcome", "TraceProcess", "run_trace", "format_signal",
           "set_concurrency"]

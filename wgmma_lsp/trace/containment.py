"""What the runner does around a trace so that it stays contained: memory counted once per
page, leftovers killed, /dev/shm and temporary files removed, and a limit on traces at once.

Standard library only; nothing here imports JAX or user code.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from wgmma_lsp.trace.supervisor import descendants

log = logging.getLogger("wgmma_lsp.trace")
SHM = Path("/dev/shm")


# -- memory --------------------------------------------------------------------------------

def _kib(path: str, field: str) -> int | None:
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_mb(pid: int) -> float | None:
    """A process's proportional share of resident memory (PSS: a page shared by n processes
    counts 1/n in each), in MiB; its RSS where the kernel has no smaps_rollup; None if gone."""
    kib = _kib(f"/proc/{pid}/smaps_rollup", "Pss:")
    if kib is None:
        kib = _kib(f"/proc/{pid}/status", "VmRSS:")
    return None if kib is None else kib / 1024


def tree_memory_mb(root: int) -> float | None:
    """Memory of a process and all its descendants, each page counted once (summed PSS), in
    MiB; None if the process is gone. Twelve idle forks of one process count about once."""
    total = process_mb(root)
    if total is None:
        return None
    for pid in descendants(root):
        total += process_mb(pid) or 0.0
    return total


def tree_rss_mb(root: int) -> float | None:
    """The sum of every process's RSS (shared pages counted in each): what not to compare
    with a limit, kept for comparison and tests."""
    total = _kib(f"/proc/{root}/status", "VmRSS:")
    if total is None:
        return None
    for pid in descendants(root):
        total += _kib(f"/proc/{pid}/status", "VmRSS:") or 0
    return total / 1024


# -- leftovers -----------------------------------------------------------------------------

def start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot): with the pid, a process's identity."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


class SeenProcesses:
    """Every process seen in a trace's tree, to kill at the end whatever is still alive (when
    there is no PID namespace, a process whose supervisor was killed leaves the tree)."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def record(self, root: int) -> None:
        for pid in [root, *descendants(root)]:
            if pid not in self.seen:
                st = start_time(pid)
                if st is not None:
                    self.seen[pid] = st

    def kill_survivors(self, root: int) -> list[int]:
        """SIGKILL each process seen that still runs (same pid, same start time), with its
        descendants; returns the pids killed."""
        killed = []
        for _ in range(20):
            alive = [p for p, st in self.seen.items() if p != root and start_time(p) == st]
            below = [child for p in alive for child in descendants(p)]
            todo = [p for p in dict.fromkeys(alive + below) if p != os.getpid()]
            if not todo:
                break
            for pid in todo:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except (ProcessLookupError, PermissionError):
                    pass
            threading.Event().wait(0.02)
        if killed:
            log.warning("trace: killed %d processes left outside the supervisor's tree", len(set(killed)))
        return sorted(set(killed))


# -- files ---------------------------------------------------------------------------------

def private_tmpdir() -> str:
    """A temporary folder of the trace's own (TMPDIR, TMP, TEMP point there), removed after."""
    return tempfile.mkdtemp(prefix="wgmma-lsp-trace-")


def remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=False, onerror=_log_rm_error)


def _log_rm_error(_func: object, path: str, exc: object) -> None:
    log.warning("trace: cannot remove %s: %s", path, exc)


def shm_snapshot() -> set[tuple[str, int]]:
    """The (name, inode) of every file in /dev/shm now."""
    try:
        return {(e.name, e.inode()) for e in os.scandir(SHM)}
    except OSError:
        return set()


def _open_anywhere(paths: set[str]) -> set[str]:
    """Those of `paths` that a running process has open or mapped."""
    held: set[str] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{name}/fd"):
                try:
                    target = os.readlink(f"/proc/{name}/fd/{fd}")
                except OSError:
                    continue
                if target in paths:
                    held.add(target)
            with open(f"/proc/{name}/maps", encoding="utf-8", errors="replace") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].strip() in paths:
                        held.add(parts[5].strip())
        except OSError:
            continue
    return held


def clean_shm(before: set[tuple[str, int]]) -> list[str]:
    """Remove the /dev/shm files the trace left (only needed without a PID namespace, whose
    /dev/shm is a private tmpfs): files that were not there before it started, that belong to
    this user, and that no running process has open or mapped (the trace's processes are all
    dead by then, so a holder is someone else's). Returns the names removed."""
    try:
        new = [e for e in os.scandir(SHM) if (e.name, e.inode()) not in before]
    except OSError:
        return []
    mine = {e.path for e in new if _owned(e)}
    if not mine:
        return []
    keep = _open_anywhere(mine)
    removed = []
    for path in sorted(mine - keep):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(os.path.basename(path))
        except OSError as e:
            log.warning("trace: cannot remove %s: %s", path, e)
    if removed:
        log.info("trace: removed %d files the trace left in /dev/shm", len(removed))
    return removed


def _owned(entry: os.DirEntry) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_uid == os.geteuid()
    except OSError:
        return False


# -- concurrency ---------------------------------------------------------------------------

class Slots:
    """At most `limit` traces at once; the others wait (in order of arrival), and a wait ends
    early when the trace is cancelled."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.running = 0
        self.peak = 0
        self._cond = threading.Condition()
        self._queue: list[object] = []

    def set_limit(self, limit: int) -> None:
        with self._cond:
            self.limit = max(1, limit)
            self._cond.notify_all()

    def acquire(self, cancelled: "threading.Event") -> bool:
        """Wait for a slot; False if `cancelled` was set first."""
        token = object()
        with self._cond:
            self._queue.append(token)
            try:
                while self._queue[0] is not token or self.running >= self.limit:
                    if cancelled.is_set():
                        return False
                    self._cond.wait(0.1)
                self.running += 1
                self.peak = max(self.peak, self.running)
                return True
            finally:
                self._queue.remove(token)
                self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify_all()


SLOTS = Slots(os.cpu_count() or 1)

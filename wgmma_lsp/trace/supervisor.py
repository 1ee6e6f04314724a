"""The trace sandbox's supervisor: a small process between the server and the trace worker that
makes sure nothing the worker starts outlives it.

Run as a script by the server's own interpreter (standard library only, never user code):

    python supervisor.py WATCH_FD -- INTERPRETER worker.py

- It marks itself a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): every process the worker
  starts, even one that calls `os.setsid()` or double-forks to leave its session and process
  group, is re-parented to the supervisor when its own parent dies, so it stays in the
  supervisor's tree, where it can be found (`/proc/*/stat`) and killed.
- The worker gets `PR_SET_PDEATHSIG(SIGKILL)`: it dies with the supervisor.
- It watches `WATCH_FD`, the read end of a pipe whose write end only the server holds: end of
  file there means the server closed it (the trace is over or cancelled) or died, even by
  SIGKILL. SIGTERM (the runner's time and memory limits) means the same. In each case it kills
  its whole tree, repeatedly until no process is left, and exits.
- When the worker exits by itself, whatever it left behind is killed too; the supervisor exits
  with the worker's status (by the same signal if the worker was killed by one).
"""

from __future__ import annotations

import ctypes
import errno
import os
import select
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.2
KILL_ROUNDS = 200

_libc = None


def prctl(option: int, arg: int) -> bool:
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        return _libc.prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every process below `root`, from /proc (parents before children)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc (not Linux): only the process group is left to kill
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, ()):
            out.append(child)
            todo.append(child)
    return out


def reap() -> list[tuple[int, int]]:
    """Collect every exited child (orphans re-parented here included)."""
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_tree() -> None:
    """SIGKILL every descendant, again and again, until none is left (a process forking while
    it is killed leaves children that the next round finds: they are re-parented here)."""
    me = os.getpid()
    for _ in range(KILL_ROUNDS):
        pids = descendants(me)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap()
        select.select([], [], [], 0.01)
    reap()


def main(argv: list[str]) -> int:
    watch_fd = int(argv[1])
    command = argv[argv.index("--") + 1:]
    parent = os.getppid()
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # besides the pipe: the server's death
    if os.getppid() != parent:
        return 1
    stop_r, stop_w = os.pipe()
    os.set_blocking(stop_w, False)

    def on_signal(signum: int, _frame: object) -> None:
        try:
            os.write(stop_w, b"x")
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    def in_child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    me = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return 127
    if pid == 0:  # the worker
        try:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.close(stop_r)
            os.close(stop_w)
            os.close(watch_fd)
            in_child()
            if os.getppid() != me:  # the supervisor died before the death signal was armed
                os._exit(1)
            os.execvp(command[0], command)
        except OSError as e:
            sys.stderr.write(f"wgmma-lsp: cannot start {command[0]}: {e}\n")
        os._exit(127)
    status: int | None = None
    while status is None:
        try:
            ready, _, _ = select.select([watch_fd, stop_r], [], [], POLL_SECONDS)
        except InterruptedError:
            ready = []
        except OSError as e:  # pragma: no cover
            if e.errno != errno.EINTR:
                raise
            ready = []
        for exited, st in reap():
            if exited == pid:
                status = st
        if status is not None:
            break
        if ready:
            if watch_fd in ready:
                try:
                    if os.read(watch_fd, 1):
                        continue  # nothing is ever written; ignore
                except OSError:
                    pass
            kill_tree()  # told to stop, or the server is gone
            if not os.path.isdir("/proc"):  # no process tree to walk: the whole group goes
                os.killpg(0, signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)  # ends as the worker did: killed
            return 137
    kill_tree()  # what the worker left behind
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

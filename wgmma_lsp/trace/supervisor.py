"""The trace sandbox's supervisor: a small process between the server and the trace worker that
makes sure nothing the worker starts outlives the trace, and that the worker cannot reach it.

Run as a script by the server's own interpreter (standard library only, never user code):

    python supervisor.py WATCH_FD [--no-namespace] [--shm-mb N] -- INTERPRETER worker.py

The process tree is  server -> supervisor -> init -> worker -> (whatever the user's code starts).

- **A PID namespace where the kernel allows one** (`unshare(CLONE_NEWPID)`, with
  `CLONE_NEWUSER` when unprivileged, plus `CLONE_NEWNS`). `init` is process 1 of the new
  namespace: the kernel ignores every signal sent to it from inside the namespace that it has no
  handler for (SIGKILL included), and when it exits the kernel kills every process of the
  namespace, `setsid` daemons and double forks included. Processes outside the namespace (the
  supervisor, the server, the editor) have no PID there: the user's code cannot signal them
  (`kill`, `kill(-1)`, `pidfd_send_signal` all stay inside). In the new mount namespace
  `/dev/shm` is a fresh tmpfs (size limited to the memory limit), freed with the namespace.
- The first line the supervisor writes on stderr, before anything else runs, is
  `wgmma-lsp-supervisor: containment=pid-namespace` (or `=pid-namespace, shared /dev/shm (why)`,
  `=process-tree (why)`): the runner
  reads it as the containment of the run (the worker cannot have written it: it does not exist yet).
- **Without a namespace** (`--no-namespace`, or the kernel refuses): the supervisor is a *child
  subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`), so a `setsid` process stays in its tree, and the
  worker is not its child (it is init's), but same-user code can still find and kill the
  supervisor through /proc. The runner then also kills every process it saw in the tree.
- The worker runs in a session of its own (`setsid`), so `kill(0, ...)` reaches only its group.
  It has `PR_SET_PDEATHSIG(SIGKILL)` on init, init has it on the supervisor.
- It watches `WATCH_FD`, the read end of a pipe whose write end only the server holds: end of
  file there means the server closed it (the trace is over or cancelled) or died, even by
  SIGKILL. SIGTERM (the runner's time and memory limits) means the same. In each case it kills
  init (so the whole namespace) and its whole tree, and exits.
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
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
POLL_SECONDS = 0.2
KILL_ROUNDS = 200
BANNER = "wgmma-lsp-supervisor: containment="

_libc = None


def libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def prctl(option: int, arg: int) -> bool:
    try:
        return libc().prctl(option, arg, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def enter_namespaces(shm_mb: int) -> str:
    """Move this process's future children into a new PID (and mount) namespace.

    Returns the containment reached: "pid-namespace" or "process-tree (why not)"."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        unshare = libc().unshare
    except (OSError, AttributeError) as e:
        return f"process-tree (no unshare: {e})"
    if unshare(CLONE_NEWPID | CLONE_NEWNS) != 0:  # privileged: no user namespace needed
        first = ctypes.get_errno()
        if unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0:
            return (f"process-tree (unshare: {os.strerror(first)}; "
                    f"with a user namespace: {os.strerror(ctypes.get_errno())})")
        try:  # keep our own ids inside (unmapped ids could not create files)
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError as e:
            sys.stderr.write(f"wgmma-lsp: cannot map ids in the trace's user namespace: {e}\n")
            sys.exit(126)
    shm = private_shm(shm_mb)
    return "pid-namespace" if shm is None else f"pid-namespace, shared /dev/shm ({shm})"


def private_shm(shm_mb: int) -> str | None:
    """A fresh tmpfs on /dev/shm in the new mount namespace (mounts made private first, so
    nothing propagates back). None when done, else why not: /dev/shm stays shared and the
    runner cleans it up."""
    mount = libc().mount
    if mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"mounts not private: {os.strerror(ctypes.get_errno())}"
    if not os.path.isdir("/dev/shm"):
        return "no /dev/shm"
    opts = f"mode=1777,size={max(shm_mb, 16)}m".encode()
    if mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        return f"tmpfs: {os.strerror(ctypes.get_errno())}"
    return None


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


def run_init(command: list[str], life_r: int) -> None:
    """Process 1 of the namespace (or a plain intermediate without one): starts the worker in a
    session of its own, reaps every orphan, and exits with the worker's status (128 + signal if
    it was killed), which ends the namespace and everything in it."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    ready, _, _ = select.select([life_r], [], [], 0)
    if ready:  # end of file: the supervisor died before the death signal was armed
        os._exit(1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)  # pid 1 of a namespace: ignored from inside
    try:
        worker = os.fork()
    except OSError:
        os._exit(127)
    if worker == 0:
        try:
            os.close(life_r)
            os.setsid()
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.execvp(command[0], command)
        except OSError as e:
            sys.stderr.write(f"wgmma-lsp: cannot start {command[0]}: {e}\n")
        os._exit(127)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == worker:
            break
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _options(argv: list[str]) -> tuple[int, bool, int, list[str]]:
    split = argv.index("--")
    opts = argv[1:split]
    shm_mb = int(opts[opts.index("--shm-mb") + 1]) if "--shm-mb" in opts else 1024
    return int(opts[0]), "--no-namespace" in opts, shm_mb, argv[split + 1:]


def main(argv: list[str]) -> int:
    watch_fd, no_namespace, shm_mb, command = _options(argv)
    parent = os.getppid()
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # besides the pipe: the server's death
    if os.getppid() != parent:
        return 1
    containment = ("process-tree (namespaces not requested)" if no_namespace
                   else enter_namespaces(shm_mb))
    sys.stderr.write(f"{BANNER}{containment}\n")
    sys.stderr.flush()
    stop_r, stop_w = os.pipe()
    os.set_blocking(stop_w, False)
    life_r, life_w = os.pipe()

    def on_signal(signum: int, _frame: object) -> None:
        try:
            os.write(stop_w, b"x")
        except OSError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        init = os.fork()
    except OSError:
        return 127
    if init == 0:
        try:
            for fd in (stop_r, stop_w, watch_fd, life_w):
                os.close(fd)
            run_init(command, life_r)
        finally:
            os._exit(127)
    os.close(life_r)
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
            if exited == init:
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
            try:  # the namespace ends with its init
                os.kill(init, signal.SIGKILL)
            except ProcessLookupError:
                pass
            kill_tree()  # told to stop, or the server is gone
            if not os.path.isdir("/proc"):  # no process tree to walk: the whole group goes
                os.killpg(0, signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)  # ends as the worker did: killed
            return 137
    kill_tree()  # what the worker left behind
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    if code > 128 and code - 128 < signal.NSIG:  # the worker was killed by a signal
        sig = code - 128
        if sig not in (signal.SIGSTOP,):
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        return code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))

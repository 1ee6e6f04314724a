"""The check daemon (`wgmma-lsp daemon serve`, started in the background by `daemon start`): a
process that has imported what a `check` imports, and forks one process per `check` it is asked.

A one-file `check` spends most of its CPU before it analyses anything: Python's start and the
import of ~300 modules (benchmarks/README.md). Here that is paid once. Each check still runs in a
process of its own, forked from this one before it ran anything — the state it starts from is a
fresh process', every cache and setting read again, as `wgmma-lsp check` reads them — given the
asking process' standard streams, working directory, umask, environment and command line
(daemon_client.py). This process itself never analyses, reads no user file, runs no user code.

Which modules: a first check, forked at start on a small kernel (`WARM_UP`), says which modules it
imported; this process imports them, in that order. When one of their files changes (an upgrade,
an edit of wgmma-lsp itself), the next check is refused (the asking process checks by itself) and
the daemon ends. It ends too after `--idle-timeout` seconds without a check, and on `daemon stop`.
"""

from __future__ import annotations

import os
import sys
import time

from wgmma_lsp import daemon_client as wire

#: A small Mosaic GPU project, checked at start by a forked process: the modules that check
#: imports are the ones a check of a kernel file imports (the analysis, the race analysis of its
#: copies and barriers, the reading of a sibling module). A check that needs more imports them
#: itself; importing every module of the analysis made each check dearer (daemon.warm).
WARM_UP = {
    "warm_up_config.py": '''\
import dataclasses
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class Config:
    tile_m: int = 64
    tile_n: int = 128
    tile_k: int = 64


def transforms(dtype) -> tuple:
    swizzle = 128
    return (plgpu.TilingTransform((8, swizzle // jnp.dtype(dtype).itemsize)),
            plgpu.SwizzleTransform(swizzle))


def scratch(config: Config, dtype) -> list:
    return [
        plgpu.SMEM((config.tile_m, config.tile_k), dtype, transforms=transforms(dtype)),
        plgpu.SMEM((config.tile_k, config.tile_n), dtype, transforms=transforms(dtype)),
        plgpu.SMEM((config.tile_m, config.tile_n), dtype, transforms=transforms(dtype)),
        plgpu.ACC((config.tile_m, config.tile_n), jnp.float32),
        plgpu.Barrier(num_arrivals=2),
    ]
''',
    "warm_up_kernel.py": '''\
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

from warm_up_config import Config, scratch


def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, acc, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)
    plgpu.wgmma(acc, a_smem, b_smem)
    plgpu.wgmma_wait(0)
    o_smem[...] = acc[...].astype(o_smem.dtype)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)


def matmul(a, b, config: Config):
    return plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((config.tile_m, config.tile_n), a.dtype),
        scratch_types=scratch(config, a.dtype),
    )(a, b)


if __name__ == "__main__":
    for tile_n in (128, 256):
        config = Config(tile_n=tile_n)
        a = jnp.zeros((config.tile_m, config.tile_k), jnp.float16)
        b = jnp.zeros((config.tile_k, config.tile_n), jnp.float16)
        jax.block_until_ready(functools.partial(matmul, config=config)(a, b))
''',
}


class _Daemon:
    def __init__(self, folder: str, digest: str, idle_timeout: float) -> None:
        self.folder = folder
        self.key = digest
        self.path = wire.socket_path(folder, digest)
        self.idle_timeout = idle_timeout
        self.started = time.time()
        self.last_request = time.monotonic()
        self.served = 0
        self.refused = 0
        self.children: set[int] = set()
        self.children_cpu = 0.0  # user + system seconds of the checks that ended
        self.files: list[tuple[str, int, int]] = []  # the imported modules' files, as imported
        self.listener = None
        self.lock_fd = -1

    # -- start ------------------------------------------------------------------------------------

    def lock(self) -> bool:
        """One daemon per key: an exclusive lock held while it runs."""
        import fcntl

        self.lock_fd = os.open(os.path.join(self.folder, f"check-{self.key}.lock"),
                               os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def warm(self) -> list[str]:
        """Import what a check imports: the modules a forked check of `WARM_UP`'s kernel imported,
        in that order; returns their names. A module that fails to import here is left for the
        checks. (Not every module a check may need — a rule's, when it reports: those a check
        imports itself. Importing all of the analysis' packages made the daemon twice as big, and
        each check dearer: forking and ending a bigger process.)"""
        import importlib
        import tempfile

        from wgmma_lsp import codegen_cache

        with tempfile.TemporaryDirectory(prefix="warm-", dir=self.folder) as tmp:
            for name, text in WARM_UP.items():
                with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                    f.write(text)
            names = _modules_of_a_check(os.path.join(tmp, "warm_up_kernel.py"))
        for name in names:
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except Exception as e:  # noqa: BLE001 - the checks import it themselves, and fail there
                    print(f"daemon: warm-up could not import {name}: {type(e).__name__}: {e}", file=sys.stderr)
        codegen_cache.save()  # what the imports compiled, written once here, not by every check
        self.files = _module_files()
        return names

    def listen(self) -> None:
        import socket

        try:
            os.unlink(self.path)  # a socket left by a daemon that ended (the lock is ours)
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(self.path)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        self.listener = sock

    # -- the loop ---------------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until stopped, idle, stale or terminated (SIGTERM)."""
        import signal

        assert self.listener is not None
        self.listener.settimeout(1.0)
        signal.signal(signal.SIGTERM, _terminated)
        print(f"daemon: serving {self.path} (pid {os.getpid()})", file=sys.stderr, flush=True)
        self.last_request = time.monotonic()  # (idle from now: not from before the warm-up)
        try:
            while True:
                self._reap()
                if self._idle() and not self.children:
                    print("daemon: idle timeout, ending", file=sys.stderr, flush=True)
                    return 0
                try:
                    conn, _ = self.listener.accept()
                except (TimeoutError, InterruptedError):
                    continue
                if self._serve(conn):
                    return 0
        except _Terminated:
            print("daemon: terminated", file=sys.stderr, flush=True)
            return 0
        finally:
            self.end()

    def _idle(self) -> bool:
        return self.idle_timeout > 0 and time.monotonic() - self.last_request > self.idle_timeout

    def _serve(self, conn) -> bool:
        """Answer one connection; True when the daemon is to end. A bad request is dropped
        (logged), never the daemon."""
        fds: list[int] = []
        try:
            conn.settimeout(5.0)
            if not _same_user(conn):
                return False
            message, fds = wire.receive(conn, max_fds=4)
            if message is None:
                return False
            kind = message.get("kind")
            if message.get("protocol") != wire.PROTOCOL or message.get("key") != self.key:
                wire.send(conn, {"refused": "another environment's daemon"})
                return False
            if kind == "status":
                wire.send(conn, self.status())
                return False
            if kind == "stop":
                wire.send(conn, {"stopping": os.getpid()})
                return True
            if kind != "check" or len(fds) != 4 or not _valid_check(message):
                wire.send(conn, {"refused": f"not a request this daemon answers ({kind!r})"})
                return False
            self.last_request = time.monotonic()
            changed = self._changed_file()
            if changed is not None:
                self.refused += 1
                wire.send(conn, {"refused": f"{changed} changed since it started", "ending": True})
                print(f"daemon: {changed} changed since start; ending", file=sys.stderr, flush=True)
                return True
            if not _single_threaded():
                wire.send(conn, {"refused": "the daemon runs threads: it cannot fork safely"})
                return True
            pid = os.fork()
            if pid == 0:
                _child(conn, (self.listener.fileno(), self.lock_fd), message, fds)  # never returns
            self.children.add(pid)
            self.served += 1
            return False
        except (OSError, ValueError, EOFError, TypeError, KeyError) as e:
            print(f"daemon: a request was dropped: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            return False
        finally:
            for fd in fds:
                os.close(fd)
            conn.close()

    def _changed_file(self) -> str | None:
        for path, mtime, size in self.files:
            try:
                st = os.stat(path)
            except OSError:
                return path
            if (st.st_mtime_ns, st.st_size) != (mtime, size):
                return path
        return None

    def _reap(self) -> None:
        while self.children:
            try:
                pid, _status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.children_cpu += usage.ru_utime + usage.ru_stime

    def status(self) -> dict:
        import resource

        self._reap()
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {"pid": os.getpid(), "key": self.key, "socket": self.path, "started": self.started,
                "served": self.served, "refused": self.refused, "running": len(self.children),
                "cpu_self": own.ru_utime + own.ru_stime, "cpu_checks": self.children_cpu,
                "idle_timeout": self.idle_timeout, "python": sys.executable, "modules": len(sys.modules),
                "log": wire.log_path(self.folder, self.key)}

    def end(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        if self.listener is not None:
            self.listener.close()


class _Terminated(Exception):
    pass


def _terminated(signum, frame) -> None:
    raise _Terminated


def _valid_check(message: dict) -> bool:
    """A `check` command line with the fields a check needs, of their types (the daemon forks
    only to run `wgmma-lsp check`)."""
    argv, env, umask, streams = (message.get(k) for k in ("argv", "env", "umask", "streams"))
    return (isinstance(argv, list) and len(argv) >= 2 and argv[1] == "check"
            and all(isinstance(a, str) for a in argv)
            and isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
            and isinstance(umask, int) and 0 <= umask <= 0o777
            and isinstance(streams, list) and len(streams) == 3
            and all(isinstance(s, list) and len(s) == 4 and isinstance(s[0], str) and isinstance(s[1], str)
                    for s in streams))


def _single_threaded() -> bool:
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _same_user(conn) -> bool:
    """The peer runs as this user (`SO_PEERCRED`; where the platform has no such option, the
    folder's mode is the only gate)."""
    import socket

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, option, 12)
    uid = int.from_bytes(creds[4:8], sys.byteorder)
    return uid == os.getuid()


def _module_files() -> list[tuple[str, int, int]]:
    out = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append((path, st.st_mtime_ns, st.st_size))
    return out


def _modules_of_a_check(path: str) -> list[str]:
    """The modules a `check --no-cache` of `path` imports, in order, from a forked process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:
            os.close(read)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            from wgmma_lsp import cli

            cli.main(["check", "--no-cache", "--no-progress", path])
            os.write(write, "\n".join(sys.modules).encode())
            rc = 0
        finally:
            os._exit(rc)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    names = b"".join(chunks).decode().split("\n")
    return [n for n in names if n and n != "__main__"]


def _child(conn, daemons: tuple[int, int], message: dict, fds: list[int]) -> None:
    """A check, in a process forked for it: it becomes the asking process (streams, working
    directory, umask, environment, command line), runs `cli.main`, says its exit code. Until
    the asker says to go, a failure is the daemon's log's (the asker then checks by itself);
    after, it is said on the asker's stderr, and the asker reports the check lost."""
    rc = 2
    log_fd = os.dup(2)  # the daemon's log
    started = False
    try:
        import signal

        for fd in daemons:  # the listening socket, the lock: the daemon's alone (it may end first)
            os.close(fd)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
        stdin, stdout, stderr, cwd = fds
        os.fchdir(cwd)
        os.umask(int(message["umask"]))
        env = message["env"]
        argv = message["argv"]
        wire.send(conn, {"pid": os.getpid()})
        try:
            go, _ = wire.receive(conn)
        except OSError:
            go = None
        if not go or not go.get("go"):  # the asker gave up waiting and checks by itself
            rc = 0
            return
        started = True
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = argv
        _standard_streams(message["streams"])
        rc = _run_check(argv)
        wire.send(conn, {"exit": rc})
    except BaseException:  # noqa: BLE001 - said where it belongs (see above)
        import traceback

        text = traceback.format_exc()
        try:
            os.write(2 if started else log_fd, text.encode("utf-8", "replace"))
        except OSError:
            pass  # no stream left to say it on
    finally:
        os._exit(rc)


def _standard_streams(streams: list) -> None:
    import io

    made = []
    for fd, (encoding, errors, line_buffering, write_through), mode in zip(
            (0, 1, 2), streams, ("rb", "wb", "wb")):
        raw = io.FileIO(fd, mode[0], closefd=False)
        buffered = io.BufferedReader(raw) if mode == "rb" else io.BufferedWriter(raw)
        made.append(io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                     line_buffering=line_buffering, write_through=write_through))
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made


def _run_check(argv: list[str]) -> int:
    """`wgmma-lsp check ...` as the launcher runs it: its exit code, its exit handlers run and its
    output flushed (process_end.finish: the process then ends without Python's teardown, as
    launch.exit_now ends one)."""
    from wgmma_lsp import cli
    from wgmma_lsp.process_end import finish

    try:
        try:
            rc = cli.main(argv[1:])
        except SystemExit as e:  # argparse's usage errors and --help
            code = e.code
            if code is None or isinstance(code, int):
                rc = code or 0
            else:
                print(code, file=sys.stderr)
                rc = 1
        except KeyboardInterrupt:
            print("KeyboardInterrupt", file=sys.stderr)
            rc = 130
    finally:
        finish()  # (a failed flush: the reader left, nothing more to say to it)
    return rc


def serve(idle_timeout: float, expect_key: str | None) -> int:
    """`wgmma-lsp daemon serve`: run in the foreground until stopped, idle or stale."""
    try:
        folder = wire.trusted_dir(make=True)
    except wire.NotTrusted as e:
        print(f"wgmma-lsp daemon: {e}", file=sys.stderr)
        return 2
    digest = wire.key()
    if expect_key is not None and digest != expect_key:
        print("wgmma-lsp daemon: this process would not answer the `check`s of the environment "
              "that started it (another interpreter, sys.path or Python flags)", file=sys.stderr)
        return 2
    daemon = _Daemon(folder, digest, idle_timeout)
    if not daemon.lock():
        print(f"wgmma-lsp daemon: already running for this environment ({daemon.path})", file=sys.stderr)
        return 1
    os.chdir("/")  # no folder kept busy
    names = daemon.warm()
    print(f"daemon: {len(names)} modules imported", file=sys.stderr, flush=True)
    daemon.listen()
    return daemon.run()


def main(argv: list[str]) -> int:
    """`wgmma-lsp daemon serve [--idle-timeout SECONDS] [--expect-key KEY]` (the launcher calls
    this before `cli`: `daemon start` runs it in the background)."""
    import argparse

    parser = argparse.ArgumentParser(prog="wgmma-lsp daemon serve")
    parser.add_argument("--idle-timeout", type=float, default=wire.DEFAULT_IDLE_TIMEOUT)
    parser.add_argument("--expect-key", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return serve(args.idle_timeout, args.expect_key)

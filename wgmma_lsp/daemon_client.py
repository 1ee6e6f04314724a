"""The check daemon's address and wire format, and `wgmma-lsp check`'s side of it (no import of
the analysis here: this runs first in every `check`).

`wgmma-lsp daemon start` leaves a process running that has imported what a check imports
(daemon.py). A `check` finds it by a socket whose name is a digest of everything that decides
which code a fresh process would run: the interpreter, `sys.path`, Python's flags, the `PYTHON*`
and locale variables, and the cache folder's variables. A process started differently never finds
it, and runs the check itself, as without a daemon. The daemon forks one process per check; that
process is given this process' standard streams, working directory, umask and environment
(`SCM_RIGHTS`), so it prints where and as this process would, then says its exit code here.

Where: `$WGMMA_LSP_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/wgmma-lsp`, else `/tmp/wgmma-lsp-<uid>`: a
folder that must be this user's and closed to everyone else (mode 0700), or nothing is sent
there — nor started. See docs/security.md ("The check daemon").

Imports only modules the interpreter has loaded at start or that are built in (`_socket`,
`_signal`, `marshal`, `_blake2`): a check that finds no daemon pays one `stat`.
"""

from __future__ import annotations

import marshal
import os
import sys

#: A check's message to the daemon and the daemon's replies: a 4-byte length, then `marshal` data
#: (dicts, lists, strings, numbers; read only from a peer of the same user). Version 1.
PROTOCOL = 1
MAX_MESSAGE = 16 * 1024 * 1024
#: The variables read when Python starts or when the daemon imported the analysis (the cache
#: folder of the generated dataclass code): a difference means another process than the daemon's.
KEY_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "WGMMA_LSP_CACHE_DIR", "XDG_CACHE_HOME", "HOME")
#: `check` options that keep the check in this process: `--trace` runs the file's code (under the
#: trace supervisor this process starts), `--no-daemon` says so.
LOCAL_OPTIONS = ("--trace", "--no-daemon")
OFF_VARIABLE = "WGMMA_LSP_NO_DAEMON"
#: `daemon start` and `serve`: the daemon ends after this long without a check (0: never).
DEFAULT_IDLE_TIMEOUT = 3 * 3600


class NotTrusted(Exception):
    """The runtime folder is not this user's alone: no socket there is used or made."""


def runtime_dir() -> str:
    explicit = os.environ.get("WGMMA_LSP_RUNTIME_DIR")
    if explicit:
        return os.path.abspath(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "wgmma-lsp")
    return os.path.join("/tmp", f"wgmma-lsp-{os.getuid()}")


def trusted_dir(make: bool = False) -> str:
    """The runtime folder, checked: a real folder (not a link), this user's, mode 0700. `make`:
    created (0700) when missing. Raises NotTrusted, saying why."""
    d = runtime_dir()
    if make:
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise NotTrusted(f"cannot create {d}: {e.strerror}") from None
    try:
        st = os.lstat(d)
    except OSError as e:
        raise NotTrusted(f"{d}: {e.strerror}") from None
    if (st.st_mode & 0o170000) != 0o040000:
        raise NotTrusted(f"{d} is not a folder")
    if st.st_uid != os.getuid():
        raise NotTrusted(f"{d} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        raise NotTrusted(f"{d} is open to other users (mode {st.st_mode & 0o777:o}; it must be 700)")
    return d


def key() -> str:
    """The digest naming this process' daemon (see the module's doc). `safe_path` is left out:
    the launcher sets `PYTHONSAFEPATH` for the processes it starts (launch.py), the daemon
    among them, after having removed what it would have kept off `sys.path`."""
    from _blake2 import blake2b

    flags = repr(sys.flags).replace(f"safe_path={sys.flags.safe_path!r}", "")
    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith("PYTHON") and k != "PYTHONSAFEPATH" or k in KEY_VARIABLES)
    text = repr((PROTOCOL, sys.executable, sys.version, sys.path, flags, sys.warnoptions,
                 sorted(sys._xoptions.items()), env, os.path.dirname(os.path.abspath(__file__))))
    return blake2b(text.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


def socket_path(folder: str, digest: str) -> str:
    return os.path.join(folder, f"check-{digest}.sock")


def log_path(folder: str, digest: str) -> str:
    return os.path.join(folder, f"check-{digest}.log")


# -- the wire -------------------------------------------------------------------------------------

def send(sock, message: dict, fds: list[int] | None = None) -> None:
    data = marshal.dumps(message)
    frame = len(data).to_bytes(4, "big") + data
    if fds:
        import _socket

        sent = sock.sendmsg([frame], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS,
                                       b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds))])
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def receive(sock, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message (None: the peer closed the connection first) and the descriptors sent with it."""
    import _socket

    fds: list[int] = []
    head = b""
    if max_fds:
        head, ancillary, _flags, _addr = sock.recvmsg(4, _socket.CMSG_SPACE(4 * max_fds))
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds += [int.from_bytes(data[i:i + 4], sys.byteorder, signed=True)
                        for i in range(0, len(data) - len(data) % 4, 4)]
        if not head:
            return None, fds
    head = _read(sock, 4, head)
    if head is None:
        return None, fds
    size = int.from_bytes(head, "big")
    if size > MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes (at most {MAX_MESSAGE})")
    body = _read(sock, size, b"")
    if body is None:
        return None, fds
    message = marshal.loads(body)
    if not isinstance(message, dict):
        raise ValueError("a message that is not a dict")
    return message, fds


def _read(sock, size: int, got: bytes) -> bytes | None:
    chunks = [got]
    have = len(got)
    while have < size:
        chunk = sock.recv(min(size - have, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        have += len(chunk)
    return b"".join(chunks)


def connect(path: str, timeout: float | None):
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


# -- `check` ----------------------------------------------------------------------------------------

def wanted(argv: list[str]) -> bool:
    """Whether this `check` command line may be handed to a daemon."""
    return (hasattr(os, "fork") and not os.environ.get(OFF_VARIABLE)
            and not any(a in LOCAL_OPTIONS for a in argv))


def try_check(argv: list[str]) -> int | None:
    """Run `check` in this environment's daemon, if one runs: its exit code, or None when no
    daemon took it (none running, another environment's, stopping, a stream that cannot be
    handed over) — the caller then checks here, as without a daemon."""
    digest = key()
    try:
        path = socket_path(trusted_dir(), digest)
        os.stat(path)
    except (OSError, NotTrusted):
        return None
    fds = [0, 1, 2]
    try:
        for fd in fds:
            os.fstat(fd)
        cwd_fd = os.open(".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # a closed standard stream, an unreadable working directory: checked here
        return None
    try:
        try:
            sock = connect(path, 5.0)
        except OSError:  # a socket left by a daemon that ended: checked here
            return None
        with _Closing(sock):
            umask = os.umask(0o022)
            os.umask(umask)
            request = {"kind": "check", "protocol": PROTOCOL, "key": digest, "argv": list(argv),
                       "env": dict(os.environ), "umask": umask, "streams": _streams()}
            try:
                send(sock, request, [*fds, cwd_fd])
                reply, _ = receive(sock)
            except (OSError, ValueError):
                return None
            if reply is None or "pid" not in reply:  # refused (stale, another key): checked here
                if reply is not None and reply.get("ending"):
                    print(f"wgmma-lsp: note: the check daemon ended ({reply.get('refused')}); this check "
                          "runs here. `wgmma-lsp daemon start` starts it again.", file=sys.stderr)
                return None
            try:  # the check starts there only now: a check given up on above never runs twice
                send(sock, {"go": True})
            except OSError:
                return None
            return _wait(sock, int(reply["pid"]))
    finally:
        os.close(cwd_fd)


def _streams() -> list[list]:
    out = []
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        out.append([getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict",
                    bool(getattr(stream, "line_buffering", False)), bool(getattr(stream, "write_through", False))])
    return out


def _wait(sock, pid: int) -> int:
    """Wait for the check's exit code, passing on the signals that would have ended it here."""
    import _signal

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass  # it ended meanwhile: its exit code is on its way

    for signum in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(signum, forward)
    sock.settimeout(None)
    while True:
        try:
            reply, _ = receive(sock)
        except InterruptedError:
            continue
        except (OSError, ValueError) as e:
            reply = None
            print(f"wgmma-lsp: lost the check daemon's answer: {e}", file=sys.stderr)
        if reply is None:
            print("wgmma-lsp: the check daemon's process ended without an exit code (see "
                  "`wgmma-lsp daemon status` for its log)", file=sys.stderr)
            return 2
        if "exit" in reply:
            return int(reply["exit"])


def request(kind: str, timeout: float = 5.0) -> dict | None:
    """Ask this environment's daemon (`status`, `stop`): its reply, None when none answers."""
    digest = key()
    try:
        sock = connect(socket_path(trusted_dir(), digest), timeout)
    except (OSError, NotTrusted):
        return None
    with _Closing(sock):
        try:
            send(sock, {"kind": kind, "protocol": PROTOCOL, "key": digest})
            reply, _ = receive(sock)
        except (OSError, ValueError):
            return None
        return reply


class _Closing:
    def __init__(self, sock) -> None:
        self.sock = sock

    def __enter__(self):
        return self.sock

    def __exit__(self, *exc) -> None:
        self.sock.close()

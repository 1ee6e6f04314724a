"""`wgmma-lsp daemon start|stop|status`: the check daemon (daemon.py), seen from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from wgmma_lsp import daemon_client as wire

#: How long `daemon start` waits for the daemon to answer (its warm-up check imports the analysis).
START_SECONDS = 60.0


def start(idle_timeout: float | None) -> int:
    try:
        folder = wire.trusted_dir(make=True)
    except wire.NotTrusted as e:
        print(f"wgmma-lsp daemon: not started: {e}", file=sys.stderr)
        return 2
    running = wire.request("status")
    if running is not None and "pid" in running:
        print(f"wgmma-lsp daemon: already running (pid {running['pid']}, {running['socket']})")
        return 0
    if idle_timeout is None:
        idle_timeout = wire.DEFAULT_IDLE_TIMEOUT
    digest = wire.key()
    log = wire.log_path(folder, digest)
    flags = subprocess._args_from_interpreter_flags()  # the same Python, as this process was started
    command = [sys.executable, *flags, "-m", "wgmma_lsp", "daemon", "serve",
               "--idle-timeout", str(idle_timeout), "--expect-key", digest]
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, cwd="/",
                                   start_new_session=True, close_fds=True)
    finally:
        os.close(fd)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            print(f"wgmma-lsp daemon: not started (exit {process.returncode}); its log, {log}:\n"
                  f"{_tail(log)}", file=sys.stderr)
            return 2
        status = wire.request("status")
        if status is not None and "pid" in status:
            print(f"wgmma-lsp daemon: started (pid {status['pid']}); `wgmma-lsp check` in this "
                  f"environment now runs in it. Socket {status['socket']}, log {log}" +
                  (f", ends after {_duration(idle_timeout)} without a check" if idle_timeout > 0 else ""))
            return 0
        time.sleep(0.05)
    process.terminate()
    print(f"wgmma-lsp daemon: not started: no answer within {START_SECONDS:.0f} s; its log, {log}:\n"
          f"{_tail(log)}", file=sys.stderr)
    return 2


def stop() -> int:
    reply = wire.request("stop")
    if reply is None or "stopping" not in reply:
        print("wgmma-lsp daemon: none running for this environment")
        return 0
    pid = int(reply["stopping"])
    for _ in range(100):  # it ends after its answer: wait for its socket to go
        if not _alive(pid):
            break
        time.sleep(0.02)
    print(f"wgmma-lsp daemon: stopped (pid {pid})")
    return 0


def status(as_json: bool) -> int:
    reply = wire.request("status")
    if reply is None or "pid" not in reply:
        if as_json:
            print("{}")
        else:
            print("wgmma-lsp daemon: none running for this environment "
                  f"(would use {wire.socket_path(wire.runtime_dir(), wire.key())})")
        return 1
    if as_json:
        import json

        print(json.dumps(reply, sort_keys=True))
        return 0
    up = time.time() - float(reply["started"])
    print(f"wgmma-lsp daemon: running (pid {reply['pid']}) for {_duration(up)}\n"
          f"  checks served: {reply['served']} ({reply['running']} running), refused: {reply['refused']}\n"
          f"  CPU: {reply['cpu_checks']:.2f} s in checks, {reply['cpu_self']:.2f} s in the daemon itself\n"
          f"  socket: {reply['socket']}\n  log: {reply['log']}\n  python: {reply['python']}")
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:]).rstrip() or "(empty)"
    except OSError as e:
        return f"(unreadable: {e.strerror})"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"

"""The check daemon (`wgmma-lsp daemon start`): a `check` it runs says what the same `check` says
without it — same output, same exit code, same configuration — and only processes started the
same way, by the same user, use it (wgmma_lsp/daemon.py, daemon_client.py; docs/security.md).

Each test runs the console script as a user does, with its own runtime folder (short: a Unix
socket's path has at most 107 bytes), from `/` unless it says otherwise (the launcher takes the
working directory off `sys.path`: run from a checkout on `PYTHONPATH`, the check and the daemon
would import different code, and the daemon would rightly not be asked)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from wgmma_lsp import daemon_client as wire

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the daemon forks (POSIX only)")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "wgmma-lsp"
SEED = ROOT / "examples" / "seed_errors.py"
FIXED = ROOT / "examples" / "seed_fixed.py"


def _run(args: list[str], env: dict[str, str], cwd: Path | str = "/", local: bool = False,
         timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(env)
    if local:
        env["WGMMA_LSP_NO_DAEMON"] = "1"
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


_started: list[dict[str, str]] = []  # every environment a test started a daemon in: stopped after it


def _start(env: dict[str, str], *options: str) -> subprocess.CompletedProcess:
    _started.append(env)
    return _run(["daemon", "start", *options], env, timeout=120)


def _status(env: dict[str, str]) -> dict:
    run = _run(["daemon", "status", "--json"], env)
    return json.loads(run.stdout)


@pytest.fixture
def env():
    folder = tempfile.mkdtemp(prefix="wl-", dir="/tmp")
    os.chmod(folder, 0o700)
    e = {k: v for k, v in os.environ.items() if k != "WGMMA_LSP_NO_DAEMON"}
    e["WGMMA_LSP_RUNTIME_DIR"] = folder
    yield e
    for started in [e, *_started]:
        _run(["daemon", "stop"], started, timeout=60)
    _started.clear()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def daemon(env):
    start = _start(env, "--idle-timeout", "600")
    assert start.returncode == 0, start.stdout + start.stderr
    assert "started" in start.stdout
    return env


def _same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_a_check_in_the_daemon_says_what_a_check_here_says(daemon) -> None:
    before = _status(daemon)["served"]
    runs = [["check", str(SEED)], ["check", str(FIXED)], ["check", "--format", "json", str(SEED)],
            ["check", "--select", "WG002", "--no-cache", str(SEED)]]
    for args in runs:
        there, here = _run(args, daemon), _run(args, daemon, local=True)
        _same(there, here)
    assert _status(daemon)["served"] == before + len(runs)
    assert _run(["check", str(SEED)], daemon).returncode == 1
    assert _run(["check", str(FIXED)], daemon).returncode == 0


def test_the_working_directory_and_the_project_configuration_are_the_asking_process(daemon, tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.wgmma-lsp]\nignore = ["WG001"]\n')
    (tmp_path / "k.py").write_text(SEED.read_text())
    before = _status(daemon)["served"]
    there, here = _run(["check", "k.py"], daemon, cwd=tmp_path), _run(["check", "k.py"], daemon, cwd=tmp_path, local=True)
    _same(there, here)
    assert "WG002" in there.stdout and "WG001" not in there.stdout
    assert _status(daemon)["served"] == before + 1


def test_usage_errors_and_help_come_out_as_here(daemon) -> None:
    for args in (["check", "--format", "bogus", str(SEED)], ["check", "--help"], ["check", "no/such/file.py"]):
        _same(_run(args, daemon), _run(args, daemon, local=True))


def test_a_process_started_otherwise_checks_by_itself(daemon) -> None:
    """Another sys.path (here a PYTHONPATH entry) may import other code: not the daemon's."""
    before = _status(daemon)["served"]
    other = dict(daemon, PYTHONPATH=os.pathsep.join(filter(None, ["/nonexistent-wgmma", daemon.get("PYTHONPATH")])))
    run = _run(["check", str(SEED)], other)
    _same(run, _run(["check", str(SEED)], daemon, local=True))
    for args in (["check", "--no-daemon", str(SEED)], ["check", str(SEED), "--trace"]):
        assert _run(args, daemon).returncode == 1
    assert _status(daemon)["served"] == before


def test_a_changed_module_file_ends_the_daemon(env, tmp_path) -> None:
    """The daemon imported wgmma_lsp from a copy; a file of the copy changes: the next check runs
    in its own process (the same answer), and the daemon ends."""
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "wgmma_lsp", copy / "wgmma_lsp", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [str(copy), env.get("PYTHONPATH")])))
    start = _start(env)
    assert start.returncode == 0, start.stderr
    assert _run(["check", str(SEED)], env).returncode == 1
    assert _status(env)["served"] == 1
    base = copy / "wgmma_lsp" / "rules" / "base.py"
    st = base.stat()
    os.utime(base, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    there, here = _run(["check", str(SEED)], env), _run(["check", str(SEED)], env, local=True)
    assert (there.returncode, there.stdout) == (here.returncode, here.stdout)
    assert there.stderr == (
        f"wgmma-lsp: note: the check daemon ended ({base} changed since it started); this check runs "
        "here. `wgmma-lsp daemon start` starts it again.\n") + here.stderr
    status = _run(["daemon", "status"], env)
    assert status.returncode == 1 and "none running" in status.stdout


def test_a_runtime_folder_open_to_others_is_never_used(daemon) -> None:
    folder = daemon["WGMMA_LSP_RUNTIME_DIR"]
    before = _status(daemon)["served"]
    os.chmod(folder, 0o755)
    try:
        assert _run(["check", str(SEED)], daemon).returncode == 1  # checked here
        start = _run(["daemon", "start"], daemon)
        assert start.returncode == 2 and "open to other users" in start.stderr
    finally:
        os.chmod(folder, 0o700)
    assert _status(daemon)["served"] == before


def test_stop_status_and_the_idle_timeout(env) -> None:
    assert _run(["daemon", "status"], env).returncode == 1
    start = _start(env, "--idle-timeout", "3")
    assert start.returncode == 0, start.stderr
    again = _run(["daemon", "start"], env)
    assert again.returncode == 0 and "already running" in again.stdout
    status = _run(["daemon", "status"], env)
    assert status.returncode == 0 and "running (pid" in status.stdout
    deadline = time.monotonic() + 30
    while _run(["daemon", "status"], env).returncode == 0:
        assert time.monotonic() < deadline, "the daemon did not end after its idle timeout"
        time.sleep(0.5)
    assert not list(Path(env["WGMMA_LSP_RUNTIME_DIR"]).glob("*.sock"))
    assert _start(env).returncode == 0
    stop = _run(["daemon", "stop"], env)
    assert stop.returncode == 0 and "stopped" in stop.stdout
    assert _run(["daemon", "status"], env).returncode == 1


def test_a_malformed_request_is_dropped_and_the_daemon_answers_the_next(daemon) -> None:
    status = _status(daemon)
    for garbage in (b"\x00\x00\x00\x05hello", b"\xff\xff\xff\xff", b"\x00\x00\x00\x02N"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(status["socket"])
            s.sendall(garbage)
            s.shutdown(socket.SHUT_WR)
            s.recv(100)
    # a well-formed request for another command than `check`: refused, nothing forked
    root = os.open("/", os.O_RDONLY)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s, open(os.devnull, "rb+") as null:
            s.settimeout(10)
            s.connect(status["socket"])
            wire.send(s, {"kind": "check", "protocol": wire.PROTOCOL, "key": status["key"],
                          "argv": ["wgmma-lsp", "serve"], "env": {}, "umask": 0o22,
                          "streams": [["utf-8", "strict", False, False]] * 3}, [null.fileno()] * 3 + [root])
            reply, _ = wire.receive(s)
    finally:
        os.close(root)
    assert reply is not None and "refused" in reply, reply
    after = _status(daemon)
    assert after["pid"] == status["pid"] and after["served"] == status["served"]
    assert _run(["check", str(SEED)], daemon).returncode == 1


def _long_check(env: dict[str, str], tmp_path: Path, functions: int = 20000) -> subprocess.Popen:
    """A check of a file of `functions` functions (3 lines each; 20,000: ~1.5 s of CPU), started in
    the daemon (returns once it runs there)."""
    big = tmp_path / "big.py"
    big.write_text(SEED.read_text() + "".join(f"\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(functions)))
    proc = subprocess.Popen([str(SCRIPT), "check", "--no-cache", str(big)], env=env, cwd="/",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _status(env)["running"] == 0:
        assert time.monotonic() < deadline and proc.poll() is None, "the check never started in the daemon"
        time.sleep(0.05)
    return proc


def test_a_daemon_stopped_during_a_check_can_start_again_at_once(daemon, tmp_path) -> None:
    """The running check keeps nothing of the daemon's (its lock, its socket): a new one starts,
    and the check still ends with its own answer."""
    proc = _long_check(daemon, tmp_path, functions=80000)
    first = _status(daemon)["pid"]
    assert _run(["daemon", "stop"], daemon).returncode == 0
    again = _start(daemon, "--idle-timeout", "600")
    assert again.returncode == 0 and "started" in again.stdout, again.stdout + again.stderr
    assert _status(daemon)["pid"] != first
    assert proc.poll() is None, "the check ended before the daemon was started again: a longer one is needed"
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "WG001" in out, out + err


def test_ctrl_c_reaches_the_check_in_the_daemon(daemon, tmp_path) -> None:
    """SIGINT to the asking process ends the check it handed over (exit 130, as a check here),
    and the daemon goes on."""
    proc = _long_check(daemon, tmp_path)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    deadline = time.monotonic() + 10
    while _status(daemon)["running"]:
        assert time.monotonic() < deadline, "the interrupted check still runs"
        time.sleep(0.05)
    assert _run(["check", str(FIXED)], daemon).returncode == 0

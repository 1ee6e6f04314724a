"""Opening a workspace never runs its files (docs/security.md).

The workspace here holds a module named like every standard-library module and every installed
distribution's top-level module (`json.py`, `logging.py`, `pygls.py`, `jedi.py`, `multiprocessing.py`,
...), each of which writes a marker file when it is imported. The server and the CLI are started in
it, as editors and users start them — the console script, `python -m wgmma_lsp`, the VS Code
client's `python -P -m wgmma_lsp` — with trace mode off; the server must answer `initialize`, analyse
a kernel file (jedi's helper process included: the kernel imports a name only jedi can look up, and a
hover asks for an API's documentation), and no marker may appear.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "wgmma-lsp"

KERNEL = """\
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from helpers_nobody_installed import tile_size  # only jedi may know it: its helper process runs
import mylib


def kernel(a_ref, b_ref, o_ref):
    def body(acc_ref):
        plgpu.wgmma(acc_ref, a_ref, b_ref)
        acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)  # E: WG001
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)

    pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))
"""


def _module_names() -> set[str]:
    names = set(sys.stdlib_module_names) | set(md.packages_distributions())
    # our own package is left out: `python -m wgmma_lsp` finds a workspace `wgmma_lsp.py` before it
    # whatever the server does (Python resolves `-m` first); the last tests cover that case
    return {n for n in names if n.isidentifier() and n not in ("__main__", "wgmma_lsp")}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    ws = tmp_path_factory.mktemp("workspace")
    markers = tmp_path_factory.mktemp("markers")
    for name in _module_names():
        (ws / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    (ws / "mylib").mkdir()
    (ws / "mylib" / "__init__.py").write_text(f"open({str(markers / 'mylib')!r}, 'w').close()\n")
    (ws / "kernel.py").write_text(KERNEL)
    return ws, markers


def _imported(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def _clean(markers: Path) -> None:
    for p in markers.iterdir():
        p.unlink()


class _Client:
    """Just enough JSON-RPC over stdio for an editor's first minute."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""
        self.messages: list[dict] = []
        self.next_id = 0

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: object, timeout: float = 60.0) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m, timeout)

    def notify(self, method: str, params: object) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, want, timeout: float) -> dict:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.messages):
                if want(m):
                    return self.messages.pop(i)
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = int(re.search(rb"Content-Length: *(\d+)", head, re.I).group(1))
                if len(rest) >= length:
                    self.messages.append(json.loads(rest[:length]))
                    self.buf = rest[length:]
                    continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer from the server; stderr:\n{self.stderr_now()}")
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.5))
            if ready:
                data = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not data:
                    raise AssertionError(f"the server closed its output; stderr:\n{self.stderr_now()}")
                self.buf += data

    def stderr_now(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")[-4000:]


def _session(command: list[str], ws: Path) -> list[dict]:
    """initialize, open the kernel, wait for its diagnostics, hover an API name, shut down."""
    client = _Client(command, ws)
    try:
        init = client.request("initialize", {"processId": os.getpid(), "rootUri": ws.as_uri(),
                                             "capabilities": {}})
        assert "capabilities" in init["result"]
        client.notify("initialized", {})
        uri = (ws / "kernel.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": KERNEL}})
        published = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == uri, 60)
        line = KERNEL.splitlines().index(next(s for s in KERNEL.splitlines() if "plgpu.wgmma(" in s))
        col = KERNEL.splitlines()[line].index("wgmma(") + 1
        for _ in range(2):  # the first hover may start jedi's documentation lookup; the second reads it
            client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": line, "character": col}})
            time.sleep(1.0)
        client.request("shutdown", None)
        client.notify("exit", None)
        assert client.proc.wait(timeout=30) == 0
        return published["params"]["diagnostics"]
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


SERVER_COMMANDS = {
    "console script": [str(SCRIPT)],
    "python -m": [sys.executable, "-m", "wgmma_lsp"],
    "vscode client (python -P -m)": [sys.executable, "-P", "-m", "wgmma_lsp"],
}


@pytest.mark.parametrize("mode", sorted(SERVER_COMMANDS))
def test_the_server_imports_nothing_from_its_workspace(workspace, mode: str) -> None:
    ws, markers = workspace
    _clean(markers)
    diagnostics = _session(SERVER_COMMANDS[mode], ws)
    assert any(d.get("code") == "WG001" for d in diagnostics), diagnostics  # it did analyse the kernel
    assert _imported(markers) == []


CHECK_COMMANDS = {
    "console script": [str(SCRIPT), "check", "."],
    "python -m": [sys.executable, "-m", "wgmma_lsp", "check", "."],
    "python -P -m": [sys.executable, "-P", "-m", "wgmma_lsp", "check", "."],
}


@pytest.mark.parametrize("mode", sorted(CHECK_COMMANDS))
def test_check_imports_nothing_from_the_folder_it_checks(workspace, mode: str) -> None:
    ws, markers = workspace
    _clean(markers)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    run = subprocess.run(CHECK_COMMANDS[mode], cwd=ws, env=env, capture_output=True, text=True,
                         timeout=300)
    assert "WG001" in run.stdout, run.stdout + run.stderr
    assert _imported(markers) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the check daemon forks (POSIX only)")
def test_a_check_in_the_daemon_imports_nothing_from_the_folder_it_checks(workspace) -> None:
    """`wgmma-lsp daemon start` and the check it then runs, both started in the workspace."""
    import tempfile

    ws, markers = workspace
    _clean(markers)
    folder = tempfile.mkdtemp(prefix="wl-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "WGMMA_LSP_NO_DAEMON")}
    env["WGMMA_LSP_RUNTIME_DIR"] = folder
    try:
        start = subprocess.run([str(SCRIPT), "daemon", "start"], cwd=ws, env=env, capture_output=True,
                               text=True, timeout=300)
        assert start.returncode == 0, start.stdout + start.stderr
        run = subprocess.run([str(SCRIPT), "check", "."], cwd=ws, env=env, capture_output=True, text=True,
                             timeout=300)
        assert "WG001" in run.stdout, run.stdout + run.stderr
        status = subprocess.run([str(SCRIPT), "daemon", "status", "--json"], cwd=ws, env=env,
                                capture_output=True, text=True, timeout=60)
        assert json.loads(status.stdout)["served"] == 1
    finally:
        subprocess.run([str(SCRIPT), "daemon", "stop"], cwd=ws, env=env, capture_output=True, timeout=60)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    assert _imported(markers) == []


def test_a_workspace_package_named_like_ours_is_not_run_by_the_clients_command(tmp_path: Path) -> None:
    """`python -m X` finds X in the working directory first: only `-P` (what the VS Code client and
    the editor examples use) or the console script keep a workspace `wgmma_lsp.py` out."""
    marker = tmp_path / "ran"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "wgmma_lsp.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    for command in ([sys.executable, "-P", "-m", "wgmma_lsp", "--version"], [str(SCRIPT), "--version"]):
        run = subprocess.run(command, cwd=ws, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and "wgmma-lsp" in run.stdout, run.stderr
        assert not marker.exists()


def test_every_launch_command_the_project_ships_is_safe() -> None:
    """The editor clients and examples start the server as the console script or with `-P`."""
    ts = (ROOT / "vscode-client" / "src" / "serverCommand.ts").read_text()
    assert '"-m", "wgmma_lsp"' not in ts.replace('"-P", "-m", "wgmma_lsp"', "")
    assert '"-P", "-m", "wgmma_lsp"' in ts
    for path in [*(ROOT / "editors").rglob("*"), ROOT / "README.md", ROOT / "docs" / "editors.md"]:
        if path.is_file():
            text = path.read_text()
            unsafe = re.findall(r"""(?:python3?['"]?\s*,?\s*['"]?|python3? )-m['"]?,?\s*['"]?wgmma_lsp""", text)
            assert not unsafe, f"{path.relative_to(ROOT)} starts the server with `python -m` without -P: {unsafe}"

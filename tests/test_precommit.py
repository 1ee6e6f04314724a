"""The pre-commit hook in .pre-commit-hooks.yaml, run by pre-commit on a temporary repository.

No network: the hook is declared as a `repo: local` hook with the same id, entry and file types
as the published one, but `language: system` (the wgmma-lsp of this environment) instead of
`language: python` (which would have pre-commit pip-install this package into a new virtualenv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
BAD = (ROOT / "examples" / "seed_errors.py").read_text()
FIXED = (ROOT / "examples" / "seed_fixed.py").read_text()


def test_published_hook() -> None:
    (hook,) = HOOKS
    assert hook["id"] == "wgmma-lsp"
    assert hook["entry"].split()[:2] == ["wgmma-lsp", "check"]
    assert hook["language"] == "python" and hook["types"] == ["python"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "test@example.com")
    _git(repo, "config", "user.name", "test")
    (hook,) = HOOKS
    local = {k: v for k, v in hook.items() if k != "language"}
    config = {"repos": [{"repo": "local", "hooks": [{**local, "language": "system"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    return repo


def pre_commit(repo: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    exe = shutil.which("pre-commit", path=bindir) or shutil.which("pre-commit")
    assert exe, "pre-commit is in the [test] extra"
    return subprocess.run([exe, "run", "--all-files"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


def test_hook_fails_on_a_bad_kernel_and_passes_once_fixed(repo: Path, tmp_path: Path) -> None:
    (repo / "kernel.py").write_text(BAD)
    (repo / "notes.txt").write_text("not python\n")
    _git(repo, "add", "-A")
    proc = pre_commit(repo, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "kernel.py:23:20: WG001 Accumulator dtype float32 does not match value dtype bfloat16" in proc.stdout
    assert "Found 3 errors in 1 file." in proc.stdout

    (repo / "kernel.py").write_text(FIXED)
    _git(repo, "add", "-A")
    proc = pre_commit(repo, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout

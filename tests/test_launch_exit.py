"""A finished `check` ends without Python's teardown (launch.exit_now): nothing it printed or
cached may be lost, and its exit code is the command's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from wgmma_lsp import cli

ROOT = Path(__file__).resolve().parent.parent


def _check(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wgmma_lsp", "check", "--no-progress", *args],
                          text=True, timeout=300, cwd=ROOT, **kwargs)


def test_everything_printed_reaches_a_pipe_and_a_file(tmp_path: Path) -> None:
    seed = str(ROOT / "examples" / "seed_errors.py")
    piped = _check(seed, capture_output=True)
    in_process = subprocess.run(
        [sys.executable, "-c", "import sys; from wgmma_lsp.cli import main; sys.exit(main(sys.argv[1:]))",
         "check", "--no-progress", seed], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert piped.returncode == in_process.returncode == 1
    assert piped.stdout == in_process.stdout  # the usual exit prints the same, all of it
    assert piped.stdout.rstrip().endswith("Found 3 errors in 1 file.")
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        redirected = _check("--format", "json", seed, stdout=f, stderr=subprocess.PIPE)
    assert redirected.returncode == 1 and out.read_text().rstrip().endswith("]")


def test_a_clean_file_exits_0_and_the_caches_are_written(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n", encoding="utf-8")
    env = {**os.environ, "WGMMA_LSP_CACHE_DIR": str(tmp_path / "cache")}
    done = _check(str(clean), capture_output=True, env=env)
    assert (done.returncode, done.stdout.strip()) == (0, "All checks passed!")
    # written by an exit handler (codegen_cache._save): the handlers ran before the process ended
    assert list((tmp_path / "cache").glob("dataclass-code-*.marshal"))


def test_only_check_ends_without_teardown() -> None:
    cli.ends_without_teardown = False
    try:
        assert cli.main(["explain", "WG001"]) == 0
        assert not cli.ends_without_teardown  # explain, serve: Python's usual exit
    finally:
        cli.ends_without_teardown = False

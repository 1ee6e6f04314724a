"""The code dataclasses generate is compiled once per Python, not in every process (codegen_cache.py).

Each case runs a fresh Python, as `wgmma-lsp check` runs: the hook is installed before any
dataclass of wgmma-lsp exists, then the analysis is imported.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

_PROBE = (
    "import json, logging, sys\n"
    "logging.basicConfig(level=logging.WARNING, stream=sys.stderr)\n"
    "from wgmma_lsp import codegen_cache\n"
    "print(json.dumps({'hooked': codegen_cache.install()}))\n"
    "import wgmma_lsp.batch, wgmma_lsp.interpret.driver\n"
    "print(json.dumps(codegen_cache.stats()))\n"
)


def _probe(cache: Path) -> tuple[dict, str]:
    env = {**os.environ, "WGMMA_LSP_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    lines = proc.stdout.splitlines()
    assert json.loads(lines[0]) == {"hooked": True}
    return json.loads(lines[-1]), proc.stderr


#: More texts than this are compiled by a process that finds no cache: Python 3.11 and 3.12 compile
#: one text per generated method (~450 for wgmma-lsp's ~95 dataclasses), 3.13 one per class.
COMPILED_WITHOUT_CACHE = 80


def _entries(cache: Path) -> dict:
    (path,) = cache.glob("dataclass-code-*.marshal")
    return marshal.loads(path.read_bytes())


def test_the_second_process_compiles_none_of_the_dataclass_code(tmp_path: Path) -> None:
    first, _ = _probe(tmp_path)
    assert first["compiled"] > COMPILED_WITHOUT_CACHE
    second, err = _probe(tmp_path)
    assert second["compiled"] == 0, err
    assert second["used"] == first["used"]


def test_every_cached_code_is_what_compiling_its_text_gives(tmp_path: Path) -> None:
    _probe(tmp_path)
    entries = _entries(tmp_path)
    assert entries
    for text, code in entries.items():
        # what `exec(text)` from dataclasses (no __future__ flags) compiles
        assert code == compile(text, "<string>", "exec", dont_inherit=True)
        assert code.co_flags == compile(text, "<string>", "exec", dont_inherit=True).co_flags


def test_a_corrupt_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    _probe(tmp_path)
    (path,) = tmp_path.glob("dataclass-code-*.marshal")
    path.write_bytes(b"\x00not marshal")
    stats, err = _probe(tmp_path)
    assert stats["compiled"] > COMPILED_WITHOUT_CACHE
    assert "cannot be read and was ignored" in err or "holds something else" in err
    assert _entries(tmp_path)  # written again, whole


def test_a_file_others_can_write_is_not_run(tmp_path: Path) -> None:
    _probe(tmp_path)
    (path,) = tmp_path.glob("dataclass-code-*.marshal")
    path.chmod(0o666)
    stats, err = _probe(tmp_path)
    assert stats["compiled"] > COMPILED_WITHOUT_CACHE  # nothing of it was used
    assert "is not this user's alone: ignored" in err


def test_the_command_line_uses_it(tmp_path: Path) -> None:
    """`wgmma-lsp check` (launch.main) installs it: its second run writes nothing new."""
    env = {**os.environ, "WGMMA_LSP_CACHE_DIR": str(tmp_path)}
    src = tmp_path / "clean.py"
    src.write_text("x = 1\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "wgmma_lsp", "check", "--no-progress", str(src)]
    subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=True, cwd=tmp_path)
    (path,) = tmp_path.glob("dataclass-code-*.marshal")
    before = path.stat().st_mtime_ns
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=True,
                         cwd=tmp_path)
    assert "All checks passed!" in out.stdout
    assert path.stat().st_mtime_ns == before

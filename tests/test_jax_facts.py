"""The JAX API facts as one object (interpret/jax_facts.py): the table bundled for a machine
without JAX matches the JAX it was generated from, and the on-disk cache gives back exactly what
reading JAX's source gives, until one of the files read changes."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from wgmma_lsp import environment
from wgmma_lsp.interpret import jax_facts, jax_facts_cache
from wgmma_lsp.interpret.jax_version import parse

NEWEST_SUPPORTED = (0, 12)  # README: the JAX versions wgmma-lsp is tested with
INSTALLED = environment.own_jax()
needs_jax = pytest.mark.skipif(INSTALLED[0] is None, reason="no JAX installed in this environment")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_bundled_table_loads_and_is_for_the_newest_supported_jax() -> None:
    facts = jax_facts.bundled()
    version = parse(facts.jax_version or "")
    assert version is not None and version[:2] == NEWEST_SUPPORTED
    assert facts.source == "bundled"
    assert facts.default_lowering == "warpgroup"
    assert "plgpu.kernel" in facts.signatures and "pl.pallas_call" in facts.signatures


@needs_jax
def test_the_bundled_table_is_what_the_installed_jax_of_its_version_gives() -> None:
    """Regenerated from the installed JAX's source it is the same table, when the versions
    match (else: only that the installed JAX's own facts differ from nothing, i.e. read)."""
    facts, files = jax_facts.extract()
    assert files, "the facts name the files they were read from"
    if facts.jax_version != jax_facts.bundled().jax_version:
        pytest.skip(f"installed jax {facts.jax_version}; the table is for "
                    f"{jax_facts.bundled().jax_version}")
    on_disk = json.loads(jax_facts.BUNDLED.read_text(encoding="utf-8"))
    assert facts.to_json() == on_disk, "stale: run scripts/gen_jax_facts.py with the newest JAX"


@needs_jax
def test_facts_survive_their_round_trip_through_json() -> None:
    facts, _ = jax_facts.extract()
    again = jax_facts.JaxFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again == facts


@needs_jax
def test_the_cache_gives_back_what_the_source_gave(cache: Path) -> None:
    root, version = INSTALLED
    facts, files = jax_facts.extract()
    assert jax_facts_cache.load(root, version) is None  # nothing cached yet
    entry = jax_facts_cache.store(root, version, facts, files)
    assert entry is not None and entry.parent == cache
    assert jax_facts_cache.load(root, version) == facts
    assert [p.name for p in cache.iterdir()] == [entry.name], "no temporary file is left behind"


@needs_jax
def test_a_changed_jax_file_makes_the_entry_stale(cache: Path, tmp_path: Path) -> None:
    """The entry holds the mtime and size of every file read: touching one invalidates it."""
    root, version = INSTALLED
    facts, files = jax_facts.extract()
    entry = jax_facts_cache.store(root, version, facts, files)
    assert entry is not None
    data = json.loads(entry.read_text())
    data["files"][0][1] += 1  # as if that file had been rewritten since
    entry.write_text(json.dumps(data))
    assert jax_facts_cache.load(root, version) is None


@needs_jax
def test_a_corrupt_entry_is_ignored_with_a_log_line(cache: Path, caplog) -> None:
    root, version = INSTALLED
    entry = jax_facts_cache.entry_path(root, version)
    entry.parent.mkdir(parents=True)
    entry.write_text('{"key": {"format": 1}, "files": [], "facts": {"format"')
    with caplog.at_level(logging.WARNING, logger="wgmma_lsp"):
        assert jax_facts_cache.load(root, version) is None
    assert any("corrupt" in r.getMessage() for r in caplog.records)


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot mkdir
    facts = jax_facts.bundled()
    assert jax_facts_cache.store(tmp_path, "0.0.0", facts, []) is None


def test_the_cache_directory_follows_xdg_and_the_override(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("WGMMA_LSP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jax_facts_cache.cache_dir() == tmp_path / "wgmma-lsp"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert jax_facts_cache.cache_dir() == Path.home() / ".cache" / "wgmma-lsp"
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(tmp_path / "x"))
    assert jax_facts_cache.cache_dir() == tmp_path / "x"


@needs_jax
def test_a_second_process_reads_the_facts_from_the_cache(cache: Path) -> None:
    """The first load writes the entry; the next one does not read JAX's source at all."""
    import subprocess
    import sys

    code = ("from wgmma_lsp.interpret import jax_facts, jax_source; jax_facts.current(); "
            "print(len(jax_source.files_read()))")
    env = {**os.environ, "WGMMA_LSP_CACHE_DIR": str(cache)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                           check=True).stdout.strip() for _ in range(2)]
    assert int(runs[0]) > 10 and runs[1] == "0"
    assert len(list(cache.glob("jax-facts-*.json"))) == 1


@needs_jax
def test_config_flag_defaults_are_the_installed_jaxs() -> None:
    """interpret/jax_config_flags.py: each flag whose default is a literal, as the installed JAX
    has it at its default configuration (read in a fresh interpreter without JAX_* variables)."""
    import subprocess
    import sys

    facts, _ = jax_facts.extract()
    defaults = facts.config_defaults or {}
    assert defaults["jax_enable_x64"] is False and defaults["jax_default_matmul_precision"] is None
    names = sorted(n for n in defaults if n in ("jax_enable_x64", "jax_default_matmul_precision",
                                                 "jax_debug_nans", "jax_disable_jit", "jax_log_compiles"))
    program = "import jax, json\nprint(json.dumps({n: getattr(jax.config, n) for n in %r}))" % (names,)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")} | {"JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, env=env)
    assert json.loads(out.stdout) == {n: defaults[n] for n in names}

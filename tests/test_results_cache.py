"""`wgmma-lsp check`'s result cache (wgmma_lsp/results_cache.py): a re-run serves what is
unchanged, and anything the analysis looked at that changes (a module it imported, a module
that now exists, the settings, the checker itself) makes it analyse again.

Every run here is a fresh process, as a user runs `check`: the cache is only written by a
process that recorded what it read from its start (observed.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wgmma_lsp import observed, results_cache
from wgmma_lsp.interpret import jedi_resolve

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from cfg import STORE_DTYPE


def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = (acc_ref[...] * 0.5).astype(STORE_DTYPE)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


def run(a, b):
  transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))

  def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
    plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
    plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
    plgpu.barrier_wait(barrier)
    kernel(a_smem, b_smem, o_smem)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(o_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  return plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((64, 128), jnp.bfloat16),
      scratch_types=[plgpu.SMEM((64, 64), jnp.bfloat16, transforms=transforms),
                     plgpu.SMEM((64, 128), jnp.bfloat16, transforms=transforms),
                     plgpu.SMEM((64, 128), jnp.bfloat16), plgpu.Barrier(num_arrivals=2)],
  )(a, b)


# wgmma-lsp: trace run(bf16[64,64], bf16[64,128])
'''
CFG = "import jax.numpy as jnp\n\nSTORE_DTYPE = jnp.{}\n"
WG001 = "kern.py:12:20: WG001 Accumulator dtype float32 does not match value dtype bfloat16"


@pytest.fixture(scope="module")
def facts_cache(tmp_path_factory) -> Path:
    """One cache folder for the module's runs (JAX's facts read once); results are per path."""
    return tmp_path_factory.mktemp("wgmma-cache")


def check(cwd: Path, cache: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "WGMMA_LSP_CACHE_DIR": str(cache)}
    p = subprocess.run([sys.executable, "-m", "wgmma_lsp", "check", "--no-progress", *args],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout


def entry_of(cache: Path, path: Path) -> Path:
    return cache / "results" / results_cache.entry_path(str(path)).name  # named by the path's digest


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "results").glob("*.json"))


def project(tmp_path: Path, store_dtype: str | None) -> Path:
    (tmp_path / "kern.py").write_text(KERNEL)
    if store_dtype is not None:
        (tmp_path / "cfg.py").write_text(CFG.format(store_dtype))
    return tmp_path


def test_a_rerun_is_served_from_the_cache(tmp_path: Path, facts_cache: Path) -> None:
    f = tmp_path / "seed_errors.py"
    f.write_text((EXAMPLES / "seed_errors.py").read_text())
    first = check(tmp_path, facts_cache, f.name)
    assert first[0] == 1 and "WG001" in first[1] and "WG002" in first[1] and "WG003" in first[1]
    assert check(tmp_path, facts_cache, f.name) == first
    # Served, not analysed again: what the entry says is what is printed.
    entry = entry_of(facts_cache, f)
    data = json.loads(entry.read_text())
    data["result"]["diagnostics"][0]["message"] = "from the cache"
    entry.write_text(json.dumps(data))
    rc, out = check(tmp_path, facts_cache, f.name)
    assert rc == 1 and "WG001 from the cache" in out
    # ...and the same with the cache off: analysed.
    assert check(tmp_path, facts_cache, "--no-cache", f.name) == first


def test_a_changed_import_is_analysed_again(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, "float32")
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")
    (tmp_path / "cfg.py").write_text(CFG.format("bfloat16"))  # the same size: a new stamp
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and out.startswith(WG001)
    (tmp_path / "cfg.py").write_text(CFG.format("float32"))
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")


def test_a_dependency_touched_but_unchanged_still_serves(tmp_path: Path, facts_cache: Path) -> None:
    """As after a fresh checkout: new stamps, the same bytes (the log keeps their digest)."""
    project(tmp_path, "bfloat16")
    first = check(tmp_path, facts_cache, "kern.py")
    entry = entry_of(facts_cache, tmp_path / "kern.py")
    data = json.loads(entry.read_text())
    data["result"]["diagnostics"][0]["message"] = "from the cache"
    entry.write_text(json.dumps(data))
    os.utime(tmp_path / "cfg.py", ns=(10**18, 10**18))
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and "WG001 from the cache" in out
    # The same size, other bytes, a new stamp: analysed again.
    same_size = CFG.format("float16").replace("= ", "=  ")
    assert len(same_size) == len(CFG.format("bfloat16"))
    (tmp_path / "cfg.py").write_text(same_size)
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and "from the cache" not in out and "value dtype float16" in out, out


def test_a_module_that_appears_is_read(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, None)  # `from cfg import STORE_DTYPE`: not found, nothing known
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")
    (tmp_path / "cfg.py").write_text(CFG.format("bfloat16"))
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and out.startswith(WG001)


def test_a_package_that_appears_is_read(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, None)
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "__init__.py").write_text(CFG.format("bfloat16"))
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and out.startswith(WG001)


def test_other_settings_are_other_entries(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, "bfloat16")
    assert check(tmp_path, facts_cache, "--ignore", "WG001", "kern.py") == (0, "All checks passed!\n")
    rc, out = check(tmp_path, facts_cache, "kern.py")
    assert rc == 1 and out.startswith(WG001)
    (tmp_path / "pyproject.toml").write_text('[tool.wgmma-lsp]\nignore = ["WG001"]\n')
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")


def test_the_file_itself_is_keyed_by_its_text(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, "bfloat16")
    assert check(tmp_path, facts_cache, "kern.py")[0] == 1
    (tmp_path / "kern.py").write_text(KERNEL.replace("astype(STORE_DTYPE)", "astype(jnp.float32)"))
    assert check(tmp_path, facts_cache, "kern.py") == (0, "All checks passed!\n")


def test_a_corrupt_entry_is_analysed_again(tmp_path: Path, facts_cache: Path) -> None:
    project(tmp_path, "bfloat16")
    first = check(tmp_path, facts_cache, "kern.py")
    entry = entry_of(facts_cache, tmp_path / "kern.py")
    for garbage in ("{", "[]", '{"path": 1}', "\0\1\2"):
        entry.write_text(garbage)
        assert check(tmp_path, facts_cache, "kern.py") == first
    data = json.loads(entry.read_text())
    (facts_cache / "results" / "logs" / f"{data['log']}.jsonl").write_text("")  # its log is gone
    data["result"]["diagnostics"] = []
    entry.write_text(json.dumps(data))
    assert check(tmp_path, facts_cache, "kern.py") == first


def test_no_cache_reads_and_writes_nothing(tmp_path: Path) -> None:
    project(tmp_path, "bfloat16")
    cache = tmp_path / "cache"
    rc, out = check(tmp_path, cache, "--no-cache", "kern.py")
    assert rc == 1 and out.startswith(WG001)
    assert entries(cache) == []


def test_a_cache_folder_that_cannot_be_written_costs_only_speed(tmp_path: Path) -> None:
    project(tmp_path, "bfloat16")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    for _ in range(2):
        rc, out = check(tmp_path, blocker / "cache", "kern.py")
        assert rc == 1 and out.startswith(WG001)


def test_trace_mode_is_never_cached(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("from jax.experimental import pallas as pl\nx = 1\n")
    cache = tmp_path / "cache"
    check(tmp_path, cache, "--trace", "plain.py")
    assert entries(cache) == []


def test_fixes_applied_from_cached_results(tmp_path: Path, facts_cache: Path) -> None:
    """`--fix` after a run that filled the cache writes what it writes without one."""
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "seed_errors.py").write_text((EXAMPLES / "seed_errors.py").read_text())
    check(a, facts_cache, "seed_errors.py")
    check(a, facts_cache, "--fix", "seed_errors.py")
    check(b, facts_cache, "--no-cache", "--fix", "seed_errors.py")
    assert (a / "seed_errors.py").read_text() == (b / "seed_errors.py").read_text()
    assert (a / "seed_errors.py").read_text() != (EXAMPLES / "seed_errors.py").read_text()


def test_a_folder_rerun_equals_an_analysis(tmp_path: Path, facts_cache: Path) -> None:
    """A package whose modules import each other: the second run (served) prints what the first
    (analysed) did; then one module changes and the run again equals a run without the cache."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cfg.py").write_text(CFG.format("float32"))
    (pkg / "kern.py").write_text(KERNEL.replace("from cfg import", "from pkg.cfg import"))
    (pkg / "seed_errors.py").write_text((EXAMPLES / "seed_errors.py").read_text())
    first = check(tmp_path, facts_cache, "pkg")
    assert first[0] == 1 and "kern.py" not in first[1]
    assert check(tmp_path, facts_cache, "pkg") == first
    (pkg / "cfg.py").write_text(CFG.format("bfloat16"))
    again = check(tmp_path, facts_cache, "pkg")
    assert again == check(tmp_path, facts_cache, "--no-cache", "pkg")
    assert "kern.py:12:20: WG001" in again[1]


def test_a_changed_checker_never_reads_old_results(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(results_cache, "_tool", None)
    digest = results_cache.tool_digest()
    memos = list((tmp_path / "results").glob("tool-*.txt"))
    assert [m.read_text() for m in memos] == [digest]  # kept by the stamps of the files
    monkeypatch.setattr(results_cache, "_tool", None)
    assert results_cache.tool_digest() == digest  # stable while nothing changes
    memos[0].unlink()  # as after installing the same checker again: other stamps, same bytes
    monkeypatch.setattr(results_cache, "_tool", None)
    assert results_cache.tool_digest() == digest
    monkeypatch.setattr(results_cache, "_tool", None)
    monkeypatch.setattr(results_cache, "_files", lambda root: [str(ROOT / "pyproject.toml")])
    assert results_cache.tool_digest() != digest


# --- observed.py ---------------------------------------------------------------------------

def test_each_kind_of_observation_notices_its_change(tmp_path: Path) -> None:
    f, d = tmp_path / "m.py", tmp_path / "pkg"
    f.write_text("x = 1\n")
    d.mkdir()
    facts = [("f", str(f), observed._stamp(str(f))), ("e", str(tmp_path / "new.py"), False),
             ("d", str(tmp_path / "sub"), False), ("l", str(d), observed._names_digest([])),
             ("g", f"{tmp_path}\0*.py", observed._names_digest([str(f)])),
             ("r", f"{tmp_path}\0*.py", observed._names_digest([str(f)]))]
    for kind, where, seen in facts:
        assert observed.still_true(kind, where, seen), kind
    os.utime(f, ns=(1, 1))
    (tmp_path / "new.py").write_text("")
    (tmp_path / "sub").mkdir()
    (d / "t.py").write_text("")
    for kind, where, seen in facts:
        assert not observed.still_true(kind, where, seen), kind
    with pytest.raises(ValueError):
        observed.still_true("api", "x", True)


def test_a_log_begun_after_the_disk_was_read_is_refused() -> None:
    code = ("from wgmma_lsp import observed; observed.isfile('/nonexistent');"
            "print(observed.start(), observed.recording())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    code = "from wgmma_lsp import observed; print(observed.start()); observed.isfile('/x'); print(observed.snapshot())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["True", "[('e', '/x', False)]"]


def test_the_jedi_observation_kind_is_one_name() -> None:
    assert results_cache.JEDI == jedi_resolve.OBSERVATION


#: Where the analysis layers may touch the disk without observed.py, and why.
UNOBSERVED_READS = {
    "interpret/jax_facts_cache.py": "its own cache entries (the JAX files' stamps are observed)",
    "interpret/jax_facts_data.py": "the bundled facts: wgmma-lsp's own file (the tool digest)",
    "interpret/jedi_resolve.py": "validating a cached jedi answer (results_cache asks it)",
    "rules/base.py": "a rule's documentation (explain, hover), not a finding",
    "rules/catalog.py": "the error catalog: wgmma-lsp's own file (the tool digest)",
}
DISK = re.compile(r"\bos\.(stat|lstat|listdir|scandir|walk|access)\(|\bos\.path\.(exists|isfile|isdir|getsize|"
                  r"getmtime|lexists)\(|(?<![\w.])open\(|\.read_text\(|\.read_bytes\(|\.glob\(|\.rglob\(|"
                  r"\bglob\.glob\(|\.iterdir\(|\.is_file\(|\.is_dir\(|\.exists\(|\.stat\(")


def test_the_analysis_reads_the_disk_only_through_observed() -> None:
    """A result is only as fresh as what observed.py saw: a new look at the disk in the analysis
    layers goes through it, or says on its line why it need not (`# observed: ...`), or its
    module is listed above with the reason."""
    pkg = ROOT / "wgmma_lsp"
    files = [p for layer in ("interpret", "program", "entry", "models", "hazards", "rules", "ide")
             for p in (pkg / layer).rglob("*.py")] + [pkg / "analysis.py", pkg / "analysis_types.py"]
    offenders = []
    for p in files:
        rel = p.relative_to(pkg).as_posix()
        if rel in UNOBSERVED_READS:
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if DISK.search(code) and "observed." not in code and "# observed:" not in line:
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_garbage_collection_bounds_entries_and_drops_orphan_logs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(tmp_path))
    results, logs = tmp_path / "results", tmp_path / "results" / "logs"
    logs.mkdir(parents=True)
    for i in range(5):
        (results / f"{i:032x}.json").write_text(json.dumps({"log": f"log-{i}"}))
        os.utime(results / f"{i:032x}.json", (1000 + i, 1000 + i))
        (logs / f"log-{i}.jsonl").write_text("")
    (logs / "young-orphan.jsonl").write_text("")  # a run may still be writing it
    old = (1000, 1000)
    for i in range(5):
        os.utime(logs / f"log-{i}.jsonl", old)
    assert results_cache.collect_garbage(max_entries=3) == 2  # log-0 and log-1: their entries went
    assert sorted(p.name for p in results.glob("*.json")) == [f"{i:032x}.json" for i in (2, 3, 4)]
    assert sorted(p.name for p in logs.iterdir()) == ["log-2.jsonl", "log-3.jsonl", "log-4.jsonl",
                                                      "young-orphan.jsonl"]


#: Edits of the `accpkg` fixture package that change what its kernels report (each applies to
#: the file's current text, or does nothing when its text is not there).
PACKAGE_EDITS = [
    ("accpkg/configs.py", "tile_n: int = 128", "tile_n: int = 256"),
    ("accpkg/configs.py", "tile_n: int = 256", "tile_n: int = 128"),
    ("accpkg/allocs.py", "jnp.float32)\n\n\ndef smem", "jnp.bfloat16)\n\n\ndef smem"),
    ("accpkg/allocs.py", "jnp.bfloat16)\n\n\ndef smem", "jnp.float32)\n\n\ndef smem"),
    ("accpkg/stores.py", "acc_ref[...] * 2", "acc_ref[...].astype(jnp.bfloat16)"),
    ("accpkg/stores.py", "acc_ref[...].astype(jnp.bfloat16)\n\n\ndef store_same",
     "acc_ref[...] * 2\n\n\ndef store_same"),
    ("accpkg/stores.py", "acc_ref[...] = acc_ref[...] * 2", "acc_ref[...] = acc_ref[...] * 3"),
    ("accpkg/cycle_b.py", "TILE = 64", "TILE = 128"),
    ("accpkg/__init__.py", '__all__ = ["acc_for", "TileConfig"]', '__all__ = ["acc_for"]'),
]


def test_edits_to_a_package_served_as_analysed(tmp_path: Path, facts_cache: Path) -> None:
    """A differential test of the cache: a package of kernels and helper modules, edited step
    by step (helpers changed, a module removed and put back, files touched); after each step
    the run with the cache prints exactly what a run without it prints."""
    outputs = set()
    for step, served, analysed in edited_package_runs(tmp_path, facts_cache, seed=17, steps=8):
        assert served == analysed, f"step {step}"
        outputs.add(served)
    assert len(outputs) >= 3  # the edits changed what is reported


def edited_package_runs(tmp: Path, cache: Path, seed: int, steps: int):
    """(step, output with the cache, output without) after each random edit of a copy of the
    `accpkg` fixture in `tmp` (also run by benchmarks/bench_cache_differential.py)."""
    import random
    import shutil

    root = tmp / "accpkg"
    shutil.copytree(ROOT / "tests" / "fixtures" / "packages" / "accpkg", root)
    rng = random.Random(seed)
    for step in range(steps):
        if step:
            kind = rng.choice(["edit", "edit", "edit", "remove", "touch"])
            if kind == "edit":
                rel, old, new = rng.choice(PACKAGE_EDITS)
                f = root / rel
                if f.exists():  # (stores.py may be away)
                    f.write_text(f.read_text().replace(old, new))
            elif kind == "remove":  # a helper module goes, or comes back
                f, kept = root / "accpkg" / "stores.py", tmp / "stores.py.kept"
                if f.exists():
                    shutil.move(f, kept)
                else:
                    shutil.move(kept, f)
            else:
                for f in root.rglob("*.py"):
                    os.utime(f)
        served = check(tmp, cache, "accpkg")
        yield step, served, check(tmp, cache, "--no-cache", "accpkg")

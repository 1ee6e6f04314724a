"""`wgmma-lsp check` over files and folders: what it reads, what it skips, how it exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wgmma_lsp.cli import main
from wgmma_lsp.prefilter import Prefilter

EXAMPLES = Path(__file__).parent.parent / "examples"
BAD_KERNEL = (EXAMPLES / "seed_errors.py").read_text()


def run(argv: list[str], capsys) -> tuple[int, list[str], str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out.splitlines(), err


# --- exits -----------------------------------------------------------------------------------

def test_clean_run_says_so(tmp_path: Path, capsys) -> None:
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "plain.py").write_text("print('hello')\n")
    rc, out, _ = run(["check", str(tmp_path)], capsys)
    assert (rc, out) == (0, ["All checks passed!"])


def test_dirty_run_ends_with_a_summary(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text(BAD_KERNEL)
    (tmp_path / "b.py").write_text(BAD_KERNEL)
    rc, out, _ = run(["check", "--jobs", "1", str(tmp_path)], capsys)
    assert rc == 1
    assert out[-1] == "Found 6 errors in 2 files."
    assert sum(": WG00" in line for line in out) == 6


def test_syntax_error_is_reported_at_its_line(tmp_path: Path, capsys) -> None:
    f = tmp_path / "broken.py"
    f.write_text("x = 1\ndef f(:\n  pass\n")
    rc, out, _ = run(["check", str(f)], capsys)
    assert rc == 1
    assert out[0].startswith(f"{f}:2:") and " WG900 SyntaxError: " in out[0]
    assert out[-1] == "Found 1 error in 1 file."


def test_syntax_error_in_a_walked_kernel_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "k.py").write_text("from jax.experimental import pallas as pl\n\ndef f(:\n")
    rc, out, _ = run(["check", str(tmp_path)], capsys)
    assert rc == 1 and ":3:" in out[0] and "WG900" in out[0]


def test_binary_file_is_unreadable(tmp_path: Path, capsys) -> None:
    f = tmp_path / "blob.py"
    f.write_bytes(b"x = 1\n\x7fELF\x00\x01\x02")
    rc, out, _ = run(["check", str(f)], capsys)
    assert rc == 1
    assert out[0] == f"{f}:2:5: WG901 binary file: it contains NUL bytes"


def test_invalid_utf8_is_reported_at_the_bad_byte(tmp_path: Path, capsys) -> None:
    f = tmp_path / "latin1.py"
    f.write_bytes(b"# ok\nname = 'caf\xe9'\n")
    rc, out, _ = run(["check", str(tmp_path)], capsys)  # found by walking, too
    assert rc == 1
    assert out[0].startswith(f"{f}:2:12: WG901 cannot decode as utf-8: invalid continuation byte")


def test_declared_encoding_is_honoured(tmp_path: Path, capsys) -> None:
    f = tmp_path / "latin1.py"
    f.write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
    assert run(["check", str(f)], capsys)[:2] == (0, ["All checks passed!"])
    g = tmp_path / "bogus.py"
    g.write_bytes(b"# -*- coding: no-such-codec -*-\n")
    rc, out, _ = run(["check", str(g)], capsys)
    assert rc == 1 and "WG901" in out[0] and "no-such-codec" in out[0]


def test_missing_file_is_an_error(tmp_path: Path, capsys) -> None:
    rc, out, _ = run(["check", str(tmp_path / "missing.py")], capsys)
    assert rc == 1
    assert out[0] == f"{tmp_path / 'missing.py'}:1:1: WG901 cannot read: No such file or directory"


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_codes_are_a_usage_error(tmp_path: Path, capsys, option: str) -> None:
    (tmp_path / "a.py").write_text("")
    rc, out, err = run(["check", option, "WG001,WG999", str(tmp_path)], capsys)
    assert rc == 2 and out == []
    assert "WG999" in err


def test_select_accepts_codes_names_and_prefixes(tmp_path: Path, capsys) -> None:
    f = tmp_path / "k.py"
    f.write_text(BAD_KERNEL)
    rc, out, _ = run(["check", "--select", "WG002", str(f)], capsys)
    assert rc == 1 and [line.split(": ")[1][:5] for line in out if ": WG" in line and not line.startswith(" ")] == ["WG002"]
    rc, out, _ = run(["check", "--ignore", "accumulator-dtype,WG003", str(f)], capsys)
    assert rc == 1 and out[-1] == "Found 1 error in 1 file."
    rc, out, _ = run(["check", "--ignore", "WG0", str(f)], capsys)
    assert (rc, out) == (0, ["All checks passed!"])


# --- what is walked --------------------------------------------------------------------------

def _make_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("generated/\n*.tmp.py\n")
    (root / "src").mkdir()
    (root / "src" / "kernel.py").write_text(BAD_KERNEL)
    for skipped in [".venv/lib/python3.11/site-packages/pkg", "node_modules/pkg", "generated",
                    "env2/lib", "build", "src/__pycache__"]:
        (root / skipped).mkdir(parents=True)
        (root / skipped / "bad.py").write_text(BAD_KERNEL)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "env2" / "pyvenv.cfg").write_text("home = /usr\n")  # a virtualenv by any name
    (root / "src" / "scratch.tmp.py").write_text(BAD_KERNEL)


def test_walk_reads_no_virtualenv_node_modules_or_ignored_folder(tmp_path: Path) -> None:
    """Run the CLI under an audit hook that records every file opened under the repository."""
    _make_repo(tmp_path)
    script = (
        "import sys, os\n"
        f"root = {str(tmp_path)!r}\n"
        "opened = []\n"
        "def hook(event, args):\n"
        "    if event in ('open', 'os.scandir', 'os.listdir') and args and isinstance(args[0], (str, bytes, os.PathLike)):\n"
        "        p = os.fsdecode(args[0])\n"
        "        if os.path.abspath(p).startswith(root): opened.append((event, os.path.relpath(os.path.abspath(p), root)))\n"
        "sys.addaudithook(hook)\n"
        "from wgmma_lsp.cli import main\n"
        "rc = main(['check', '--jobs', '1', root])\n"
        "print('RC', rc)\n"
        "for e, p in opened: print('OPENED', e, p)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "RC 1" in lines
    reported = {line.split(":")[0] for line in lines if ": WG" in line and not line.startswith(" ")}
    assert reported == {str(tmp_path / "src" / "kernel.py")}
    touched = [line.split(" ", 2)[1:] for line in lines if line.startswith("OPENED")]
    assert any(path == "src/kernel.py" for _, path in touched)  # the hook sees what is read
    for event, path in touched:
        top = path.split("/")[0]
        if top in (".venv", "env2") and path.endswith("site-packages") and event == "os.scandir":
            continue  # the program layer looks for editable installs (.pth files) there
        assert top not in (".venv", "node_modules", "generated", "env2", "build"), (event, path)
        assert "__pycache__" not in path and "scratch.tmp.py" not in path, (event, path)


def test_named_files_are_checked_even_if_excluded(tmp_path: Path, capsys) -> None:
    _make_repo(tmp_path)
    rc, out, _ = run(["check", str(tmp_path / "generated" / "bad.py")], capsys)
    assert rc == 1 and out[-1] == "Found 3 errors in 1 file."


def test_exclude_options(tmp_path: Path, capsys) -> None:
    _make_repo(tmp_path)
    rc, out, _ = run(["check", "--extend-exclude", "src/kernel.py", str(tmp_path)], capsys)
    assert (rc, out) == (0, ["All checks passed!"])
    # `--exclude` replaces the defaults: build/ and node_modules/ are walked again (virtualenvs,
    # found by their pyvenv.cfg, never are)
    rc, out, _ = run(["check", "--exclude", "src", "--jobs", "1", str(tmp_path)], capsys)
    files = {line.split(":")[0] for line in out if ": WG" in line and not line.startswith(" ")}
    assert files == {str(tmp_path / "build" / "bad.py"), str(tmp_path / "node_modules" / "pkg" / "bad.py")}
    rc, out, _ = run(["check", "--no-respect-gitignore", "--extend-exclude", "src/kernel.py",
                      "--jobs", "1", str(tmp_path)], capsys)
    files = {line.split(":")[0] for line in out if ": WG" in line and not line.startswith(" ")}
    assert files == {str(tmp_path / "generated" / "bad.py"), str(tmp_path / "src" / "scratch.tmp.py")}


# --- the pre-filter --------------------------------------------------------------------------

def test_prefilter_follows_user_reexports_only(tmp_path: Path) -> None:
    pkg = tmp_path / "mykernels"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "common.py").write_text(
        "from jax.experimental.pallas import mosaic_gpu as gpu\nACC = gpu.ACC\ndef helper(): pass\n")
    (pkg / "again.py").write_text("from .common import ACC as Acc, helper\n")
    (pkg / "kernel.py").write_text("from mykernels.again import Acc\n")
    (pkg / "modimport.py").write_text("from mykernels import common\nx = common.ACC\n")
    (pkg / "helper_only.py").write_text("from .common import helper\n")
    (pkg / "unrelated.py").write_text("import numpy as np\n# pallas is mentioned in a comment\n"
                                      "from jax._src.lax.pallas_lowerings import gpu\n"
                                      "from jax._src.lib import mosaic_gpu\n"
                                      "import jax.experimental.mosaic.gpu as mgpu\n"
                                      "from jaxlib.mosaic.gpu import _mosaic_gpu_ext\n")
    (pkg / "spelled.py").write_text("import jax\nf = jax.experimental.pallas.pallas_call\n")
    (pkg / "plain.py").write_text("def other(): pass\n")
    (pkg / "uses_plain.py").write_text("from .plain import other\nfrom . import plain\nplain.other()\n")
    pf = Prefilter()
    names = {p.name for p in pkg.iterdir()}
    relevant = {Path(p).name for p in pf.relevant(pkg / n for n in names)}
    # helper_only.py: the program layer follows calls into common.helper (which may use the API)
    assert relevant == {"common.py", "again.py", "kernel.py", "modimport.py", "helper_only.py", "spelled.py"}


def test_prefilter_handles_import_cycles(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from b import x\nfrom jax.experimental import pallas as pl\n")
    (tmp_path / "b.py").write_text("from a import pl as x\nfrom c import y\n")
    (tmp_path / "c.py").write_text("from b import x as y\n")
    (tmp_path / "d.py").write_text("from c import y\n")
    (tmp_path / "e.py").write_text("from d import nothing\n")
    relevant = {Path(p).name for p in Prefilter().relevant(tmp_path / f"{n}.py" for n in "abcde")}
    assert relevant == {"a.py", "b.py", "c.py", "d.py"}


def test_json_output_is_machine_readable(tmp_path: Path, capsys) -> None:
    f = tmp_path / "k.py"
    f.write_text(BAD_KERNEL)
    rc, out, err = run(["check", "--format", "json", str(f)], capsys)
    records = json.loads("\n".join(out))
    assert rc == 1 and [r["code"] for r in records] == ["WG001", "WG002", "WG003"]
    assert records[0]["related"][0]["message"].startswith("allocated here")
    assert records[0]["fixes"][0]["edits"]
    assert "Found 3 errors in 1 file." in err


def test_readme_demo_output_is_true(capsys, monkeypatch) -> None:
    """The output the README shows for `scripts/demo.sh` is what `check` prints."""
    root = Path(__file__).parent.parent
    readme = (root / "README.md").read_text()
    block = readme.split("scripts/demo.sh\n```\n\n```\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)
    assert main(["check", "examples/seed_errors.py"]) == 1
    assert capsys.readouterr().out == block
    assert main(["check", "examples/seed_fixed.py"]) == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_seed_fixed_passes_check_with_trace(capsys, monkeypatch) -> None:
    """What the issue tried: JAX traces and lowers every entry point of seed_fixed.py (its
    kernels are `plgpu.kernel`s, which every supported JAX lowers with Mosaic GPU on the CPU)."""
    monkeypatch.chdir(Path(__file__).parent.parent)
    assert main(["check", "--trace", "examples/seed_fixed.py"]) == 0
    assert capsys.readouterr().out == "All checks passed!\n"


def test_trace_mode_codes_are_known(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "--ignore", "TRACE002,lowering-error", str(tmp_path)]) == 0
    assert main(["check", "--ignore", "TRACE099", str(tmp_path)]) == 2
    capsys.readouterr()


def test_progress_line_on_a_terminal(tmp_path: Path, capsys) -> None:
    from wgmma_lsp.batch import check_files
    from wgmma_lsp.discovery import python_files
    from wgmma_lsp.settings import Settings

    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BAD_KERNEL)
    found = list(python_files([tmp_path]))
    results = check_files(found, lambda p: Settings(), jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "[2/2]" in err and err.endswith("\r\x1b[K")  # the line is cleared at the end
    assert [len(r.diagnostics) for r in results] == [3, 3]
    check_files(found, lambda p: Settings(), jobs=1)  # not a terminal: no progress line
    assert capsys.readouterr().err == ""


def test_prefilter_loses_no_finding_on_the_fixtures() -> None:
    """Every fixture (kernels, clean twins, the multi-module package) gets the same diagnostics
    whether the pre-filter skips files or every file is analysed."""
    from wgmma_lsp.batch import check_files
    from wgmma_lsp.discovery import python_files
    from wgmma_lsp.settings import Settings

    fixtures = Path(__file__).parent / "fixtures"
    found = list(python_files([fixtures], respect_gitignore=False))
    assert len(found) > 50

    def key(results):
        return {(str(r.path), d.code, d.span.line, d.message) for r in results for d in r.diagnostics}

    filtered = check_files(found, lambda p: Settings(), jobs=2, progress=False)
    everything = check_files(found, lambda p: Settings(), jobs=2, progress=False, prefilter=False)
    assert sum(r.analysed for r in filtered) < sum(r.analysed for r in everything) == len(found)
    assert key(filtered) == key(everything)
    assert key(filtered)  # the fixtures do have findings


def test_no_worker_is_forked_while_other_threads_run(monkeypatch) -> None:
    """A fork copies the locks other threads hold: in a process that embeds the checker and runs
    threads (this suite does, after the server's tests), a forked worker could hang for good.
    There the files are checked in-process, with the same results."""
    import threading

    import wgmma_lsp.batch as batch
    from wgmma_lsp.discovery import python_files
    from wgmma_lsp.settings import Settings

    found = list(python_files([EXAMPLES], respect_gitignore=False))
    alone = threading.active_count() == 1 and "jax" not in sys.modules
    sequential = batch.check_files(found, lambda p: Settings(), jobs=1, progress=False)

    def no_pool(*args, **kwargs):
        raise AssertionError("forked workers while another thread runs")

    monkeypatch.setattr(batch, "_run_pool", no_pool)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert not batch._fork_is_safe()
        with_thread = batch.check_files(found, lambda p: Settings(), jobs=2, progress=False)
    finally:
        stop.set()
        other.join()
    def key(rs):
        return [(str(r.path), d.code, d.span, d.message) for r in rs for d in r.diagnostics]

    assert key(with_thread) == key(sequential) and key(sequential)
    assert batch._fork_is_safe() == alone


def test_forked_workers_find_what_one_process_finds() -> None:
    """The worker pool itself (forked by `wgmma-lsp check`, a process with no other thread and
    no JAX imported; this suite's process checks in-process, see above): the same diagnostics
    as `--jobs 1`."""
    folder = Path(__file__).parent / "fixtures" / "errors"

    def run(jobs: str) -> list:
        proc = subprocess.run([sys.executable, "-m", "wgmma_lsp", "check", "--no-cache", "--jobs", jobs,
                               "--format", "json", str(folder)], capture_output=True, text=True, timeout=600,
                              check=False, cwd=folder)
        assert proc.returncode == 1, proc.stderr
        return sorted(json.dumps(d, sort_keys=True) for d in json.loads(proc.stdout))

    one = run("1")
    assert len(one) > 50
    assert run("2") == one


def test_an_analysis_crash_is_reported_not_hidden(tmp_path: Path, capsys, monkeypatch) -> None:
    import wgmma_lsp.batch as batch

    def boom(*args, **kwargs):
        raise RuntimeError("simulated analysis bug")

    monkeypatch.setattr(batch, "check_source", boom)
    (tmp_path / "k.py").write_text(BAD_KERNEL)
    assert main(["check", "--jobs", "1", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "internal error while analysing" in err and "simulated analysis bug" in err
    assert out.splitlines()[-1] == "1 file could not be analysed (internal error)."


def test_every_tool_code_is_known_and_documented(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    for code in ("WG900", "WG901", "WG902", "WG903"):
        assert main(["explain", code]) == 0
        assert capsys.readouterr().out.startswith(f"{code} ")  # rendered: the title, no `#`
        assert main(["check", "--ignore", code, str(tmp_path)]) == 0
        capsys.readouterr()


def test_summary_counts_errors_warnings_and_notes() -> None:
    from wgmma_lsp.batch import FileResult
    from wgmma_lsp.formats import summary
    from wgmma_lsp.ide.model import Diagnostic, Severity
    from wgmma_lsp.spans import Span

    def d(sev: Severity) -> Diagnostic:
        return Diagnostic("WG001", "x", "m", Span(0, 0, 0, 1), severity=sev)

    a = FileResult(Path("a.py"), [d(Severity.ERROR), d(Severity.ERROR), d(Severity.WARNING)])
    b = FileResult(Path("b.py"), [d(Severity.INFORMATION)])
    assert summary([a, b]) == "Found 2 errors, 1 warning and 1 note in 2 files."
    assert summary([b]) == "Found 1 note in 1 file."
    assert summary([FileResult(Path("c.py"))]) == "All checks passed!"


def test_a_file_reaching_the_api_through_a_src_layout_package_is_checked(tmp_path: Path) -> None:
    """`check .` in a project whose package lives in `src/` (what the analysis imports from: the
    working directory and its `src/`): a kernel file that gets `pl`/`plgpu` only from that
    package is analysed — the pre-filter resolves its imports with the same roots — and its
    errors are reported, not passed over as a file that cannot use Pallas."""
    pkg = tmp_path / "src" / "mykernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "api.py").write_text("from jax.experimental import pallas as pl\n"
                                "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
    kernel = BAD_KERNEL.replace("from jax.experimental import pallas as pl\n", "").replace(
        "from jax.experimental.pallas import mosaic_gpu as plgpu\n", "from mykernels.api import pl, plgpu\n")
    assert "jax.experimental.pallas" not in kernel
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "matmul.py").write_text(kernel)
    done = subprocess.run([sys.executable, "-m", "wgmma_lsp", "check", "--no-cache", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("Found 3 errors in 1 file")

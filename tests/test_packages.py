"""The user's other modules (the program layer): fixture packages under tests/fixtures/packages,
each a directory holding a package and kernel files that import it. Every kernel file's `# E:`
diagnostics must be what real JAX raises from that line, with the package directory on
`sys.path` for JAX's run (the analyzer never imports it: it reads the files)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.program import Program
from wgmma_lsp.program import program as P
from wgmma_lsp.rules.registry import RULES

PACKAGES = Path(__file__).parent / "fixtures" / "packages"
KERNEL_FILES = sorted(PACKAGES.glob("*/*.py"))


def errors(path: Path, program: Program | None = None, source: str | None = None):
    analysis = analyze(source if source is not None else path.read_text(), str(path), program=program)
    return {(d.span.line + 1, d.code, d.message) for d in diagnostics(analysis)
            if d.severity == Severity.ERROR}, analysis


def jax_verdicts(path: Path):
    """Trace with the fixture's package importable, as it is for its users."""
    root = str(path.parent)
    packages = {p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()}
    sys.path.insert(0, root)
    try:
        return trace_file(path)
    finally:
        sys.path.remove(root)
        for name in list(sys.modules):
            if name.split(".")[0] in packages:
                del sys.modules[name]


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_package_fixture_against_jax(path: Path) -> None:
    expected = expectations(path.read_text())
    got, _ = errors(path, Program())
    # JAX only traces these kernels here: lowering-time findings (e.g. WG018 for untransformed
    # SMEM operands under Lane semantics) are checked against the lowering in test_lowering_rules.
    got = {e for e in got if RULES[e[1]].stage != "lower"}
    assert got == expected
    verdicts = jax_verdicts(path)
    assert verdicts
    raised = {(v.line, v.message) for v in verdicts if v.message is not None}
    assert raised == {(line, msg) for line, _, msg in expected}, verdicts


def test_blame_in_another_module_is_reported_at_the_call_with_related_information() -> None:
    path = PACKAGES / "accpkg" / "kernel_store_in_helper.py"
    _, analysis = errors(path, Program())
    (d,) = diagnostics(analysis)
    helper = (PACKAGES / "accpkg" / "accpkg" / "stores.py").resolve()
    where = [r for r in d.related if r.uri == helper.as_uri()]
    assert where and where[0].span.line == 5  # `acc_ref[...] = ...astype(jnp.bfloat16)`
    assert d.fixes == []  # no fix edits another file


def test_allocation_in_another_module_is_related_information() -> None:
    path = PACKAGES / "accpkg" / "kernel_dtype.py"
    _, analysis = errors(path, Program())
    (d,) = diagnostics(analysis)
    allocs = (PACKAGES / "accpkg" / "accpkg" / "allocs.py").resolve().as_uri()
    assert [r.uri for r in d.related] == [allocs]


def test_summaries_are_reused_by_content_and_rebuilt_when_a_module_changes(tmp_path: Path) -> None:
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    allocs = pkg / "allocs.py"
    allocs.write_text(textwrap.dedent("""\
        import jax.numpy as jnp
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def acc_for():
          return plgpu.ACC((64, 128), jnp.float32)
        """))
    kernel = tmp_path / "kernel.py"
    kernel.write_text((PACKAGES / "accpkg" / "kernel_dtype.py").read_text().replace("accpkg", "mypkg"))
    program = Program()
    got, analysis = errors(kernel, program)
    assert [c for _, c, _ in got] == ["WG001"] and str(allocs) in analysis.modules
    assert program.built == 1
    errors(kernel, program)
    assert program.built == 1 and program.reused >= 1  # warm: nothing interpreted again
    assert program.dependants(str(allocs)) == {str(kernel)}
    # The helper now allocates in SMEM: the kernel's diagnostics change.
    allocs.write_text(allocs.read_text().replace("plgpu.ACC(", "plgpu.SMEM("))
    program.changed(str(allocs))
    got, _ = errors(kernel, program)
    assert program.built == 2
    assert [c for _, c, _ in got if c in ("WG001", "WG003")] == ["WG003"]  # (and WG057: a store into SMEM)
    # An open document's text wins over the disk's.
    program.overlay = lambda p: allocs.read_text().replace("plgpu.SMEM(", "plgpu.ACC(") if p == str(allocs) else None
    got, _ = errors(kernel, program)
    assert [c for _, c, _ in got] == ["WG001"]


def test_a_summary_holding_the_analysed_module_is_not_reused_for_it(tmp_path: Path) -> None:
    """`b` imports `a`; an analysis of `c` keeps `b`'s summary (its `a` is a summary of a.py).
    When a.py itself is analysed and reaches `b`, `b.caller()` must call the document's own
    `kernel` (hover and findings land in the document), as Python's one module object does —
    whatever was analysed before."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    a = pkg / "a.py"
    a.write_text(textwrap.dedent("""\
        def kernel(n):
            size = n
            return size


        def main():
            from pkg import b
            return b.caller()
        """))
    (pkg / "b.py").write_text("from pkg import a\n\n\ndef caller():\n    return a.kernel(7)\n")
    (pkg / "c.py").write_text("from pkg import b\n\nX = b.caller\n")

    def sizes(program: Program) -> list:
        analysis = analyze(a.read_text(), str(a), program=program)
        return [v for rec in analysis.records.values() if rec.name == "size" and rec.span.line == 1
                for v in rec.values]

    cold = sizes(Program())
    warm_program = Program()
    analyze((pkg / "c.py").read_text(), str(pkg / "c.py"), program=warm_program)
    assert warm_program.cached(str(pkg / "b.py"), P.digest_of((pkg / "b.py").read_text())) is not None
    warm = sizes(warm_program)
    assert any(getattr(v, "value", None) == 7 for v in cold), cold
    assert [getattr(v, "value", None) for v in warm] == [getattr(v, "value", None) for v in cold]


def test_import_cycles_are_cut_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "a.py").write_text("from b import g\n\ndef f():\n  return g()\n")
    (tmp_path / "b.py").write_text("from a import f\n\ndef g():\n  return f()\n")
    main = tmp_path / "main.py"
    main.write_text("from a import f\nx = f()\n")
    caplog.set_level("INFO", logger="wgmma_lsp")
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert any("import cycle a.py -> b.py -> a.py" in n for n in analysis.module_notes)
    assert any("import cycle" in r.message for r in caplog.records)


def test_the_analysed_file_imported_back_is_a_cycle(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("from main import X\nY = X\n")
    main = tmp_path / "main.py"
    main.write_text("from helper import Y\nX = 1\n")
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert any("import cycle" in n for n in analysis.module_notes)


def test_bounds_are_said_never_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        nxt = f"from m{i + 1} import V\n" if i < 5 else "V = 1\n"
        (tmp_path / f"m{i}.py").write_text(nxt)
    main = tmp_path / "main.py"
    main.write_text("from m0 import V\n")
    monkeypatch.setattr(P, "MAX_IMPORT_DEPTH", 3)
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert any("import chain deeper than 3" in n for n in analysis.module_notes)
    monkeypatch.setattr(P, "MAX_IMPORT_DEPTH", 12)
    monkeypatch.setattr(P, "MAX_MODULES_PER_ANALYSIS", 2)
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert any("budget of 2 modules" in n for n in analysis.module_notes)
    monkeypatch.setattr(P, "MAX_MODULES_PER_ANALYSIS", 64)
    (tmp_path / "big.py").write_text("X = 1\n" * 200)
    monkeypatch.setattr(P, "MAX_MODULE_CHARS", 100)
    main.write_text("from big import X\n")
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert any("larger than 100 characters" in n for n in analysis.module_notes)


def test_user_code_is_never_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\nX = 1\n")
    main = tmp_path / "main.py"
    main.write_text("import evil\nfrom evil import X\n")
    analyze(main.read_text(), str(main), program=Program())
    assert not marker.exists()


def test_writes_to_an_imported_instance_stay_in_the_analysis_that_made_them(tmp_path: Path) -> None:
    """Summaries are shared by every analysis: `cfg.tile_n = …` in one file must not change
    what another file sees (the write is the writer's own)."""
    (tmp_path / "cfgs.py").write_text(textwrap.dedent("""\
        class Config:
          def __init__(self):
            self.tile_n = 128

        CONFIG = Config()
        """))
    writer = tmp_path / "writer.py"
    writer.write_text("from cfgs import CONFIG\nCONFIG.tile_n = 64\nN = CONFIG.tile_n\n")
    reader = tmp_path / "reader.py"
    reader.write_text("from cfgs import CONFIG\nN = CONFIG.tile_n\n")
    program = Program()

    def n_of(path: Path):
        analysis = analyze(path.read_text(), str(path), program=program)
        values = [r.values for s, r in analysis.records.items() if r.name == "N"]
        return values[0][0].value

    assert n_of(writer) == 64
    assert n_of(reader) == 128
    assert n_of(writer) == 64


def test_hover_names_the_module_that_allocated() -> None:
    from wgmma_lsp.ide.hover import hover

    path = PACKAGES / "accpkg" / "kernel_dtype.py"
    analysis = analyze(path.read_text(), str(path), program=Program())
    line = next(i for i, t in enumerate(path.read_text().splitlines()) if "plgpu.wgmma(acc_ref" in t)
    col = path.read_text().splitlines()[line].index("acc_ref")
    info = hover(analysis, line, col)
    assert info is not None
    assert "Accumulator{float32[64,128]}" in info.markdown
    assert "accpkg/allocs.py:9" in info.markdown


def test_editable_installs_of_the_project_virtualenv_are_found(tmp_path: Path) -> None:
    """`pip install -e` in the project's `.venv`: the `.pth` path and setuptools' finder
    `MAPPING` are read as data (the finder is never imported)."""
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    libs = tmp_path / "libs" / "mypkg"
    libs.mkdir(parents=True)
    (libs / "__init__.py").write_text("")
    (libs / "allocs.py").write_text((PACKAGES / "accpkg" / "accpkg" / "allocs.py").read_text()
                                    .replace("from .configs import DEFAULT", "from vendored import DEFAULT"))
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "vendored.py").write_text((PACKAGES / "accpkg" / "accpkg" / "configs.py").read_text())
    marker = tmp_path / "finder-ran"
    (site / "__editable___mypkg_0_1_finder.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nMAPPING: dict[str, str] = {{'mypkg': {str(libs)!r}}}\n")
    (site / "__editable__.mypkg-0.1.pth").write_text("import __editable___mypkg_0_1_finder\n")
    (site / "vendor.pth").write_text(f"{vendor}\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    kernel = scripts / "run.py"
    kernel.write_text((PACKAGES / "accpkg" / "kernel_dtype.py").read_text().replace("accpkg", "mypkg"))
    got, analysis = errors(kernel, Program(roots=(str(tmp_path),)))
    assert [c for _, c, _ in got] == ["WG001"]
    assert str(libs / "allocs.py") in analysis.modules and str(vendor / "vendored.py") in analysis.modules
    assert not marker.exists()


def test_an_imported_modules_main_block_does_not_run(tmp_path: Path) -> None:
    (tmp_path / "tiles.py").write_text('TILE = 64\n\nif __name__ == "__main__":\n  TILE = 128\n')
    main = tmp_path / "main.py"
    main.write_text("from tiles import TILE\nN = TILE\n")
    analysis = analyze(main.read_text(), str(main), program=Program())
    (n,) = [r.values for r in analysis.records.values() if r.name == "N"]
    assert [v.value for v in n] == [64]


def test_the_cli_finds_the_projects_modules_from_its_working_directory(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`wgmma-lsp check scripts/run.py` from the project root: `src/mypkg` is found through the
    working directory's `src/`, as the workspace root's would be in the editor."""
    src = tmp_path / "src" / "mypkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "allocs.py").write_text((PACKAGES / "accpkg" / "accpkg" / "allocs.py").read_text()
                                   .replace("from .configs import DEFAULT", "DEFAULT = None"))
    (src / "allocs.py").write_text((src / "allocs.py").read_text().replace("config=DEFAULT", "config=None")
                                   .replace("(config.tile_m, config.tile_n)", "(64, 128)"))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    kernel = scripts / "run.py"
    kernel.write_text((PACKAGES / "accpkg" / "kernel_dtype.py").read_text().replace("accpkg", "mypkg"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(P, "_default", None)
    from wgmma_lsp.cli import main

    assert main(["check", str(kernel)]) == 1


def test_jax_kernel_ops_modules_are_read_from_the_installed_jax(tmp_path: Path) -> None:
    """`jax.experimental.pallas.ops` holds kernels that import each other (`blackwell_ragged_dot_mgpu`
    uses `ragged_dot_mgpu.GroupInfo`): its modules are read statically from the installed jax,
    though site-packages are never search roots; other jax modules stay the import table's."""
    from wgmma_lsp.interpret.values import ClassVal, ModuleVal
    from wgmma_lsp.program import lookup

    ops = lookup.find_kernel_ops("jax.experimental.pallas.ops.gpu.ragged_dot_mgpu")
    assert ops is not None and ops.endswith("jax/experimental/pallas/ops/gpu/ragged_dot_mgpu.py")
    assert lookup.find_kernel_ops("jax.experimental.pallas.mosaic_gpu") is None
    assert lookup.find_kernel_ops("jax.experimental.pallas.ops.gpu.no_such_kernel") is None
    main = tmp_path / "main.py"
    main.write_text(textwrap.dedent("""\
        from jax.experimental.pallas import mosaic_gpu as plgpu
        from jax.experimental.pallas.ops.gpu import ragged_dot_mgpu
        import jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu as hmm
        G = ragged_dot_mgpu.GroupInfo
        T = hmm.TuningConfig
        P = plgpu
        """))
    analysis = analyze(main.read_text(), str(main), program=Program())
    assert ops in analysis.modules
    values = {r.name: r.values for r in analysis.records.values() if r.name in ("G", "T", "P")}
    assert [getattr(v, "name", None) for v in values["G"]] == ["GroupInfo"]
    assert all(isinstance(v, ClassVal) for v in values["G"] + values["T"])
    assert all(isinstance(v, ModuleVal) for v in values["P"])

"""A file of an installed package (in site-packages, or any folder that is no workspace root) is
read as a program: its relative imports, its sibling modules and its package's `__init__`
re-exports resolve to the installed files — read statically, never imported — while
site-packages stays no search root for any other name (third-party modules are not the user's).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.values import UserModuleVal
from wgmma_lsp.program import Program, lookup

FIXTURE = Path(__file__).parent / "fixtures" / "packages" / "accpkg"
KERNEL = (FIXTURE / "kernel_dtype.py").read_text()  # WG001 with the accumulator from accpkg.allocs
IMPORT = "from accpkg.allocs import acc_for\n"


def install(tmp_path: Path) -> Path:
    """The fixture package `accpkg` installed in a virtualenv's site-packages (no JAX there);
    the workspace is another folder. Returns the package folder."""
    env = tmp_path / "env"
    site = env / "lib" / "python3.12" / "site-packages"
    shutil.copytree(FIXTURE / "accpkg", site / "accpkg")
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "workspace").mkdir()
    return site / "accpkg"


def kernel_in(pkg: Path, import_lines: str, name: str = "kernel_dtype.py") -> tuple[Path, int]:
    """The WG001 kernel as a module of the package, importing `acc_for` as given; returns its
    path and the line JAX blames."""
    assert IMPORT in KERNEL
    text = KERNEL.replace(IMPORT, import_lines)
    path = pkg / name
    path.write_text(text)
    (line,) = [i for i, t in enumerate(text.splitlines(), 1) if "# E: WG001" in t]
    return path, line


def findings(path: Path, roots: tuple[str, ...], source: str | None = None):
    analysis = analyze(source if source is not None else path.read_text(), str(path),
                       program=Program(roots=roots))
    by_severity = {(d.span.line + 1, d.code) for d in diagnostics(analysis)
                   if d.severity in (Severity.ERROR, Severity.WARNING)}
    return by_severity, analysis


@pytest.mark.parametrize("import_lines", [
    "from accpkg.allocs import acc_for\n",  # absolute, the package's own name
    "from .allocs import acc_for\n",  # relative
    "from accpkg import acc_for\n",  # the package's __init__ re-export
    "from . import allocs\nacc_for = allocs.acc_for\n",  # a sibling module by relative import
    "import accpkg.allocs as allocs\nacc_for = allocs.acc_for\n",
], ids=["absolute", "relative", "init-reexport", "relative-submodule", "import-as"])
def test_a_module_of_an_installed_package_reads_its_own_package(tmp_path: Path, import_lines: str) -> None:
    pkg = install(tmp_path)
    path, line = kernel_in(pkg, import_lines)
    got, analysis = findings(path, (str(tmp_path / "workspace"),))
    assert got == {(line, "WG001")}
    assert str(pkg / "allocs.py") in analysis.modules
    assert str(pkg / "configs.py") in analysis.modules  # allocs' own `from .configs import DEFAULT`


def test_other_installed_packages_stay_unread_and_a_namesake_module_is_not_itself(tmp_path: Path) -> None:
    """`import pydantic` in `accpkg/pydantic.py` is the third-party package (a module of a
    package is imported, never run as a script: its folder is not on sys.path), and
    site-packages is no search root for it: neither that module itself (an import cycle) nor the
    installed `pydantic` is read."""
    pkg = install(tmp_path)
    site = pkg.parent
    (site / "pydantic").mkdir()
    (site / "pydantic" / "__init__.py").write_text("BaseModel = 1\n")
    (pkg / "pydantic.py").write_text("import pydantic\nBaseModel = pydantic.BaseModel\nTILE = 64\n")
    path, line = kernel_in(pkg, IMPORT + "from accpkg.pydantic import TILE\nN = TILE\n")
    got, analysis = findings(path, (str(tmp_path / "workspace"),))
    assert got == {(line, "WG001")}
    assert str(pkg / "pydantic.py") in analysis.modules
    assert str(site / "pydantic" / "__init__.py") not in analysis.modules
    assert not any("cycle" in n for n in analysis.module_notes), analysis.module_notes
    (n,) = [r.values for r in analysis.records.values() if r.name == "N"]
    assert [getattr(v, "value", None) for v in n] == [64]


def test_an_import_cycle_inside_the_installed_package_is_cut_and_said(tmp_path: Path) -> None:
    """c1 imports c2, which imports c1 back (as Python allows: the module, partly initialised):
    cut, said, and the names that do not depend on the cut are known."""
    pkg = install(tmp_path)
    (pkg / "c1.py").write_text("from .c2 import TILE\n\ndef tile_of():\n  return TILE\n")
    (pkg / "c2.py").write_text("from . import c1\nTILE = 64\n")
    path, line = kernel_in(pkg, IMPORT + "from .c1 import tile_of\nT = tile_of()\n")
    got, analysis = findings(path, (str(tmp_path / "workspace"),))
    assert got == {(line, "WG001")}
    assert any("import cycle c1.py -> c2.py -> c1.py" in n for n in analysis.module_notes), analysis.module_notes
    (t,) = [r.values for r in analysis.records.values() if r.name == "T"]
    assert [getattr(v, "value", None) for v in t] == [64]


def test_an_init_that_imports_its_own_submodules_is_no_cycle(tmp_path: Path) -> None:
    """`from . import stores` in the package's `__init__`, and a submodule asking
    `from accpkg import stores`: Python gives the submodule (the `__init__` binds `stores` to
    nothing else), so the `__init__` need not run and nothing is cut; an `__init__` that binds
    the name to something else (`from .allocs import acc_for`) is read for it."""
    pkg = install(tmp_path)
    init = pkg / "__init__.py"
    init.write_text("from . import stores\n" + init.read_text())
    (pkg / "uses_stores.py").write_text("from accpkg import stores\nfrom accpkg import acc_for\n"
                                        "S = stores.store_bf16\n")
    path, line = kernel_in(pkg, "from .uses_stores import acc_for\nimport accpkg\n")
    got, analysis = findings(path, (str(tmp_path / "workspace"),))
    assert got == {(line, "WG001")}
    assert not any("cycle" in n for n in analysis.module_notes), analysis.module_notes
    assert str(pkg / "stores.py") in analysis.modules


def test_a_symlink_loop_in_the_package_ends(tmp_path: Path) -> None:
    """`accpkg/loop -> .`: the file opened through the link resolves its package by the path's
    names (never following links upwards), and a path through more links than a package is ever
    deep ends too (then its package is not found: silence, never a hang)."""
    pkg = install(tmp_path)
    path, line = kernel_in(pkg, "from .allocs import acc_for\n")
    os.symlink(".", pkg / "loop")
    through = pkg / "loop" / "loop" / path.name
    got, _ = findings(through, (str(tmp_path / "workspace"),), path.read_text())
    assert got == {(line, "WG001")}
    deep = pkg.joinpath(*["loop"] * (lookup.MAX_PACKAGE_DEPTH + 4), path.name)
    got, _ = findings(deep, (str(tmp_path / "workspace"),), path.read_text())
    assert got <= {(line, "WG001")}


def test_the_cli_checks_an_installed_packages_folder_once_per_file(tmp_path: Path, capsys,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`wgmma-lsp check site-packages/accpkg` from elsewhere: the kernel's finding (through its
    sibling) once, the symlink loop walked once; a file that names the API only through a
    sibling (`from accpkg.api import plgpu`) is selected by the prefilter too."""
    from wgmma_lsp.cli import main
    from wgmma_lsp.program import program as P

    pkg = install(tmp_path)
    path, line = kernel_in(pkg, IMPORT)
    (pkg / "api.py").write_text("from jax.experimental import pallas as pl\n"
                                "from jax.experimental.pallas import mosaic_gpu as plgpu\n")
    text = KERNEL.replace("from jax.experimental import pallas as pl\n", "") \
        .replace("from jax.experimental.pallas import mosaic_gpu as plgpu\n", "from accpkg.api import pl, plgpu\n")
    (pkg / "via_api.py").write_text(text)
    (via_line,) = [i for i, t in enumerate(text.splitlines(), 1) if "# E: WG001" in t]
    os.symlink(".", pkg / "loop")
    monkeypatch.chdir(tmp_path / "workspace")
    monkeypatch.setattr(P, "_default", None)
    assert main(["check", str(pkg)]) == 1
    out = capsys.readouterr().out
    reported = [l.split(": ")[0].rsplit(":", 1)[0] for l in out.splitlines() if " WG001 " in l]
    assert sorted(reported) == sorted([f"{path}:{line}", f"{pkg / 'via_api.py'}:{via_line}"]), out


TOKAMAX = importlib.util.find_spec("tokamax")  # found on disk, not imported
needs_tokamax = pytest.mark.skipif(TOKAMAX is None, reason="tokamax is not installed in this venv "
                                   "(it is in .venv312: Python >= 3.12, jax >= 0.11.1)")


def tokamax_file(rel: str) -> Path:
    assert TOKAMAX is not None and TOKAMAX.submodule_search_locations
    return Path(next(iter(TOKAMAX.submodule_search_locations)), rel)


@needs_tokamax
def test_a_tokamax_kernel_opened_alone_reads_its_package(tmp_path: Path) -> None:
    """The gated-linear-unit kernel, opened with the workspace elsewhere: `common` is the
    installed `pallas_mosaic_gpu_common` module (read, not imported); tokamax's own
    `jaxtyping` module is itself, not an import cycle; no error or warning."""
    kernel = tokamax_file("_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py")
    common = kernel.with_name("pallas_mosaic_gpu_common.py")
    got, analysis = findings(kernel, (str(tmp_path),))
    assert got == set()
    assert str(common) in analysis.modules
    assert str(tokamax_file("_src/jaxtyping.py")) in analysis.modules
    assert not any("cycle" in n for n in analysis.module_notes), analysis.module_notes
    values = [v for r in analysis.records.values() if r.name == "common" for v in r.values]
    assert values and all(isinstance(v, UserModuleVal) and v.path == str(common) for v in values)


@needs_tokamax
def test_the_cli_checks_one_tokamax_kernel_with_the_jax_it_is_installed_with(tmp_path: Path, capsys,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`wgmma-lsp check <one tokamax file>` from a folder whose `.venv` has another JAX: the
    file's own environment's JAX is analysed, and the file is clean."""
    from wgmma_lsp import environment
    from wgmma_lsp.cli import main
    from wgmma_lsp.program import program as P

    kernel = tokamax_file("_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(P, "_default", None)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path))  # an activated environment without JAX
    previous = environment.active()
    try:
        assert main(["check", "--show-settings", str(kernel)]) == 0
        shown = capsys.readouterr().out
        assert f"the environment {kernel} is installed in" in shown
        assert main(["check", str(kernel)]) == 0
    finally:
        environment.activate(previous)


@pytest.mark.parametrize(("init", "leaves"), [
    ("from . import stores\n", True),
    ("from accpkg import stores as stores\n", True),  # the re-export idiom (useless-import-alias)
    ("from .allocs import acc_for\nX = 1\ndef f():\n  stores = 2\n", True),  # a local is no binding
    ("from .stores import stores\n", False),  # the function, not the module
    ("stores = None\n", False),
    ("if X:\n  import stores\n", False),
    ("from .allocs import *\n", False),  # may bind it: unseen
    ("def __getattr__(name):\n  return name\n", False),
    ("globals()['stores'] = 1\n", False),
])
def test_from_package_import_a_submodule_without_running_its_init(init: str, leaves: bool) -> None:
    """Python's `from pkg import name` is the submodule unless the `__init__` binds the name
    to something else (or may, unseen)."""
    from wgmma_lsp.program import init_bindings
    from wgmma_lsp.program.program import digest_of

    assert init_bindings.leaves_submodule(init, digest_of(init), "stores", "accpkg") is leaves


def test_over_lsp_an_installed_packages_file_reads_its_package_with_the_workspace_elsewhere(
        tmp_path: Path) -> None:
    from raw_lsp import RawClient

    pkg = install(tmp_path)
    path, line = kernel_in(pkg, "from accpkg import acc_for\n")
    client = RawClient()
    try:
        workspace = (tmp_path / "workspace").as_uri()
        assert "capabilities" in client.request("initialize", {
            "processId": None, "rootUri": workspace, "capabilities": {},
            "workspaceFolders": [{"uri": workspace, "name": "workspace"}]})["result"]
        client.notify("initialized", {})
        client.open(path.as_uri(), path.read_text())
        hover = None
        for _ in range(20):
            hover = client.hover(path.as_uri(), line - 1, path.read_text().splitlines()[line - 1].index("acc_ref"))
            if hover:
                break
            client.drain(0.5)
        assert hover is not None and "Accumulator{float32[64,128]}" in hover, hover
        client.drain(1)
        published = [d for p in client.diagnostics(path.as_uri()) for d in p["diagnostics"]]
        assert {(d["range"]["start"]["line"] + 1, d["code"]) for d in published} == {(line, "WG001")}
    finally:
        client.close()


@needs_tokamax
def test_over_lsp_a_tokamax_kernel_reads_its_package_and_its_heuristics_config(tmp_path: Path) -> None:
    """The GLU kernel opened in an editor whose workspace is elsewhere: no error or warning, and
    the accumulator hovers with the sizes of the config tokamax's heuristics pick (its sibling
    module's `Config`, read from the installed package; entry/config_contexts.py)."""
    from raw_lsp import RawClient

    kernel = tokamax_file("_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py")
    text = kernel.read_text()
    (line,) = [i for i, t in enumerate(text.splitlines()) if "eval_pipeline(acc_ref)" in t]
    client = RawClient()
    try:
        workspace = tmp_path.as_uri()
        client.request("initialize", {"processId": None, "rootUri": workspace, "capabilities": {},
                                      "workspaceFolders": [{"uri": workspace, "name": "ws"}]})
        client.notify("initialized", {})
        client.open(kernel.as_uri(), text)
        shown = None
        for _ in range(60):
            shown = client.hover(kernel.as_uri(), line, text.splitlines()[line].index("acc_ref"), timeout=60)
            if shown:
                break
            client.drain(0.5)
        assert shown is not None and "Accumulator{float32[128,128]}" in shown, shown
        # (the context named: tokamax's heuristics config, or the package's own test case that
        # reaches the kernel with the same sizes, entry/test_contexts.py)
        assert "get_heuristics_config" in shown or "pallas_mosaic_gpu_test.py" in shown, shown
        client.drain(2)
        assert client.diagnostics(kernel.as_uri()), "diagnostics were published"
        published = [d for p in client.diagnostics(kernel.as_uri()) for d in p["diagnostics"]]
        assert [d for d in published if d.get("severity") in (1, 2)] == []
    finally:
        client.close()

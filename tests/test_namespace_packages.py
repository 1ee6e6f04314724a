"""Namespace packages (PEP 420): a folder without `__init__.py` is a package all the same, found
as importlib's path finder finds it — a regular package or a module of that name anywhere on the
search path wins; otherwise every folder of that name is one of its portions, its `__path__`.
Its attributes are its submodules, from any portion, and nothing else. Read statically, in the
workspace and in an installed package (tokamax keeps kernels in such folders:
`tokamax/_src/ops/experimental/routing_moe/gmm/`); never imported.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.values import UserModuleVal
from wgmma_lsp.program import Program, lookup

FIXTURE = Path(__file__).parent / "fixtures" / "packages" / "accpkg"
KERNEL = (FIXTURE / "kernel_dtype.py").read_text()  # WG001 with the accumulator from acc_for()
IMPORT = "from accpkg.allocs import acc_for\n"
ALLOCS = ("import jax.numpy as jnp\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n\n"
          "def acc_for():\n  return plgpu.ACC((64, 128), jnp.float32)\n")
# A helper of the same name whose accumulator is not known here: no finding.
ALLOCS_UNKNOWN = "import thirdparty\n\n\ndef acc_for():\n  return thirdparty.accumulator()\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def kernel(path: Path, import_lines: str) -> tuple[Path, int]:
    """The WG001 kernel at `path`, getting `acc_for` as `import_lines` say; returns its path and
    the line JAX blames."""
    assert IMPORT in KERNEL
    text = KERNEL.replace(IMPORT, import_lines)
    write(path, text)
    (line,) = [i for i, t in enumerate(text.splitlines(), 1) if "# E: WG001" in t]
    return path, line


def findings(path: Path, roots: tuple[str, ...]):
    analysis = analyze(path.read_text(), str(path), program=Program(roots=roots))
    got = {(d.span.line + 1, d.code) for d in diagnostics(analysis)
           if d.severity in (Severity.ERROR, Severity.WARNING)}
    return got, analysis


def values_of(analysis, name: str) -> list:
    (values,) = [r.values for r in analysis.records.values() if r.name == name]
    return values


# -- in the workspace ------------------------------------------------------------------------

@pytest.mark.parametrize("import_lines", [
    "from nskern import allocs\nacc_for = allocs.acc_for\n",  # a submodule of the namespace
    "import nskern.allocs\nacc_for = nskern.allocs.acc_for\n",  # reached as an attribute
    "from nskern.inner import helpers\nacc_for = helpers.acc_for\n",  # a namespace in a namespace
    "from nskern import inner\nacc_for = inner.helpers.acc_for\n",
], ids=["from-ns-import-sub", "import-ns-sub", "nested-namespace", "namespace-attribute"])
def test_a_namespace_package_in_the_workspace_gives_its_submodules(tmp_path: Path, import_lines: str) -> None:
    ws = tmp_path / "ws"
    write(ws / "nskern" / "allocs.py", ALLOCS)
    write(ws / "nskern" / "inner" / "helpers.py", "from nskern.allocs import acc_for\n")
    path, line = kernel(ws / "kernel.py", import_lines)
    got, analysis = findings(path, (str(ws),))
    assert got == {(line, "WG001")}
    assert str(ws / "nskern" / "allocs.py") in analysis.modules
    assert analysis.unresolved_imports == []  # nothing left for jedi


def test_every_portion_of_a_namespace_package_holds_its_submodules(tmp_path: Path) -> None:
    """`ws/nskern/` and `ws/src/nskern/` (both search roots) are one package: `allocs` lives in
    the second portion only."""
    ws = tmp_path / "ws"
    write(ws / "nskern" / "configs.py", "TILE = 64\n")
    write(ws / "src" / "nskern" / "allocs.py", ALLOCS)
    path, line = kernel(ws / "kernel.py", "from nskern import allocs, configs\nacc_for = allocs.acc_for\n"
                                          "T = configs.TILE\n")
    got, analysis = findings(path, (str(ws),))
    assert got == {(line, "WG001")}
    assert [getattr(v, "value", None) for v in values_of(analysis, "T")] == [64]
    assert lookup.find_absolute("nskern", lookup.search_roots(str(path), (str(ws),))) == \
        lookup.Namespace((str(ws / "nskern"), str(ws / "src" / "nskern")))


def test_a_regular_package_later_on_the_path_wins_over_a_namespace_portion(tmp_path: Path) -> None:
    """`ws/nskern/` has no `__init__.py`, `ws/src/nskern/` has one: Python imports the regular
    package, so `nskern.allocs` is the one beside that `__init__.py` (whose accumulator is not
    known here: no finding), not the namespace folder's."""
    ws = tmp_path / "ws"
    write(ws / "nskern" / "allocs.py", ALLOCS)
    write(ws / "src" / "nskern" / "__init__.py", "")
    write(ws / "src" / "nskern" / "allocs.py", ALLOCS_UNKNOWN)
    path, _ = kernel(ws / "kernel.py", "from nskern.allocs import acc_for\n")
    got, analysis = findings(path, (str(ws),))
    assert got == set()
    assert str(ws / "src" / "nskern" / "allocs.py") in analysis.modules
    assert str(ws / "nskern" / "allocs.py") not in analysis.modules


def test_a_name_that_is_no_submodule_stays_unknown(tmp_path: Path) -> None:
    """A namespace package binds nothing but its submodules: `from nskern import TILE` (Python:
    ImportError) and `nskern.TILE` are unknown — never guessed, and not asked of jedi either (the
    module is the user's, found)."""
    ws = tmp_path / "ws"
    write(ws / "nskern" / "allocs.py", ALLOCS + "TILE = 64\n")
    path = write(ws / "user.py", "import nskern\nfrom nskern import TILE\nA = TILE\nB = nskern.TILE\n"
                                 "M = nskern\nN = nskern.__name__\n")
    _, analysis = findings(path, (str(ws),))
    assert analysis.unresolved_imports == []
    for name in ("A", "B"):
        assert [type(v).__name__ for v in values_of(analysis, name)] == ["Unknown"]
    (m,) = values_of(analysis, "M")
    assert isinstance(m, UserModuleVal) and m.name == "nskern"
    assert [getattr(v, "value", None) for v in values_of(analysis, "N")] == ["nskern"]


def test_a_name_an_init_binds_to_what_is_unknown_is_no_folder_beside_it(tmp_path: Path) -> None:
    """`pkg/__init__.py` binds `data` to what is not known here (a third-party call), and a
    folder `pkg/data/` without `__init__.py` sits beside it: `from pkg import data` is the
    `__init__`'s value (Python: the attribute wins), unknown, not the folder; `from pkg import
    kernels` (bound by nothing) is the namespace package."""
    ws = tmp_path / "ws"
    write(ws / "pkg" / "__init__.py", "import thirdparty\ndata = thirdparty.load()\n")
    write(ws / "pkg" / "data" / "table.py", "X = 1\n")
    write(ws / "pkg" / "kernels" / "allocs.py", ALLOCS)
    path = write(ws / "user.py", "import pkg\nfrom pkg import data, kernels\nA = data\nB = pkg.data\n"
                                 "K = kernels\n")
    _, analysis = findings(path, (str(ws),))
    for name in ("A", "B"):
        assert not any(isinstance(v, UserModuleVal) for v in values_of(analysis, name))
    (k,) = values_of(analysis, "K")
    assert isinstance(k, UserModuleVal) and k.name == "pkg.kernels"


def test_a_namespace_folder_named_like_an_installed_module_is_not_that_module(tmp_path: Path) -> None:
    """`import json` imports the standard library's module, whatever folder `json/` a search root
    holds: the folder is no package of the user's. A regular package of that name in the roots
    would be the user's (Python finds it first), and a namespace of another name is one."""
    ws = tmp_path / "ws"
    write(ws / "json" / "helpers.py", "X = 1\n")
    write(ws / "mylib" / "helpers.py", "X = 1\n")
    roots = lookup.search_roots(str(ws / "user.py"), (str(ws),))
    assert lookup.find_absolute("json", roots) is None
    assert lookup.find_absolute("json.helpers", roots) is None
    assert lookup.find_absolute("mylib", roots) == lookup.Namespace((str(ws / "mylib"),))
    assert lookup.find_absolute("mylib.helpers", roots) == str(ws / "mylib" / "helpers.py")


def test_a_link_loop_through_a_namespace_package_ends(tmp_path: Path) -> None:
    """`nskern/again -> .`: each name of an import is one step, so a loop of links is walked
    only as far as the import spells it out."""
    ws = tmp_path / "ws"
    write(ws / "nskern" / "allocs.py", ALLOCS)
    os.symlink(".", ws / "nskern" / "again")
    path, line = kernel(ws / "kernel.py", "from nskern import again\nacc_for = again.again.again.allocs.acc_for\n")
    got, _ = findings(path, (str(ws),))
    assert got == {(line, "WG001")}


# -- in an installed package -----------------------------------------------------------------

def install(tmp_path: Path) -> Path:
    """A package shaped like tokamax in a virtualenv's site-packages: a regular top package and
    `_src/`, with kernels in namespace folders below (`experimental/moe/gmm/`,
    `experimental/moe/common/`). Returns `experimental/moe`."""
    site = tmp_path / "env" / "lib" / "python3.12" / "site-packages"
    write(tmp_path / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    write(site / "kpkg" / "__init__.py", "")
    write(site / "kpkg" / "_src" / "__init__.py", "")
    moe = site / "kpkg" / "_src" / "experimental" / "moe"
    write(moe / "common" / "allocs.py", ALLOCS)
    write(moe / "gmm" / "config.py", "from kpkg._src.experimental.moe.common import allocs\n")
    (tmp_path / "workspace").mkdir()
    return moe


@pytest.mark.parametrize("import_lines", [
    "from kpkg._src.experimental.moe.common import allocs\nacc_for = allocs.acc_for\n",
    "from kpkg._src.experimental.moe.gmm import config\nacc_for = config.allocs.acc_for\n",
    "from ..common import allocs\nacc_for = allocs.acc_for\n",
    "from .. import common\nfrom ..common import allocs\nacc_for = common.allocs.acc_for\n",
    "import kpkg._src.experimental.moe.common.allocs\n"
    "acc_for = kpkg._src.experimental.moe.common.allocs.acc_for\n",
], ids=["absolute", "sibling-module", "relative", "relative-namespace", "import-dotted"])
def test_a_module_of_an_installed_package_reads_its_namespace_folders(tmp_path: Path, import_lines: str) -> None:
    moe = install(tmp_path)
    path, line = kernel(moe / "gmm" / "kernel.py", import_lines)
    got, analysis = findings(path, (str(tmp_path / "workspace"),))
    assert got == {(line, "WG001")}
    assert str(moe / "common" / "allocs.py") in analysis.modules
    assert analysis.unresolved_imports == []

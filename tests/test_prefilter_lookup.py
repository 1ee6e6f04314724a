"""The pre-filter finds the user's modules where the program layer finds them (program/lookup.py),
and a kernel that imports the API itself costs no walk of its imports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wgmma_lsp import prefilter
from wgmma_lsp.prefilter import Prefilter

REEXPORT = "from jax.experimental.pallas import mosaic_gpu as plgpu\nACC = plgpu.ACC\n"


@pytest.fixture(autouse=True)
def _fresh_lookups():
    prefilter.cache_clear()  # each test lays out new folders
    yield
    prefilter.cache_clear()


class CountingPrefilter(Prefilter):
    """Records which files it read."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def _text(self, key: str) -> bytes:
        if key not in self._data:
            self.read.append(key)
        return super()._text(key)


@pytest.fixture
def pythonpath(monkeypatch):
    """`pythonpath(folder)` sets PYTHONPATH to it, `pythonpath()` unsets it; the lookups that
    read it (environment roots, the pre-filter's) are asked again each time, and after the test."""
    from wgmma_lsp.program import lookup

    def set_to(*folders: Path) -> None:
        if folders:
            monkeypatch.setenv("PYTHONPATH", os.pathsep.join(map(str, folders)))
        else:
            monkeypatch.delenv("PYTHONPATH", raising=False)
        lookup.environment_roots.cache_clear()
        prefilter.cache_clear()
    yield set_to
    lookup.environment_roots.cache_clear()


def test_a_kernel_that_imports_the_api_is_selected_without_reading_its_imports(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("import numpy as np\n")
    (tmp_path / "config.py").write_text("from helpers import np\n")
    kernel = tmp_path / "kernel.py"
    kernel.write_text("from jax.experimental.pallas import mosaic_gpu as plgpu\n"
                      "from helpers import np\nimport config\n")
    pf = CountingPrefilter()
    assert pf.relevant([kernel]) == {str(kernel)}
    assert pf.read == [str(kernel)]


def test_a_module_on_pythonpath_is_followed_as_the_program_layer_follows_it(tmp_path: Path, pythonpath) -> None:
    # a shared kernel library outside the checked folder, reached through PYTHONPATH: the
    # program layer resolves `from shared_defs import ACC` there, so must the pre-filter
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "shared_defs.py").write_text(REEXPORT)
    project = tmp_path / "project"
    project.mkdir()
    user = project / "user.py"
    user.write_text("from shared_defs import ACC\n")
    plain = project / "plain.py"
    plain.write_text("from shared_defs import something_else\n")
    pythonpath(lib)
    assert Prefilter().relevant([user, plain]) == {str(user)}
    pythonpath()
    assert Prefilter().relevant([user, plain]) == set()  # not found: not the user's module


def test_the_same_content_is_parsed_once() -> None:
    text = b"from jax.experimental.pallas import mosaic_gpu as plgpu\n"
    assert prefilter._imports_by_content(text) is prefilter._imports_by_content(bytes(text))


def test_the_prefilter_finds_modules_through_namespace_packages_as_the_program_layer_does(
        tmp_path: Path, pythonpath) -> None:
    """`shared/` in the project has no `__init__.py`; `shared/` on PYTHONPATH has one. Python
    imports the regular package, whose `defs` binds no API: `from shared.defs import ACC` cannot
    reach Pallas, though the namespace folder's `defs.py` would. `from nsdefs import defs`, a
    namespace package's submodule, can. The pre-filter asks the program layer's lookup."""
    project = tmp_path / "project"
    (project / "shared").mkdir(parents=True)
    (project / "shared" / "defs.py").write_text(REEXPORT)
    (project / "nsdefs").mkdir()
    (project / "nsdefs" / "defs.py").write_text(REEXPORT)
    lib = tmp_path / "lib"
    (lib / "shared").mkdir(parents=True)
    (lib / "shared" / "__init__.py").write_text("")
    (lib / "shared" / "defs.py").write_text("ACC = 1\n")
    regular = project / "regular.py"
    regular.write_text("from shared.defs import ACC\n")
    namespace = project / "namespace.py"
    namespace.write_text("from nsdefs import defs\nacc = defs.ACC\n")
    pythonpath(lib)
    from wgmma_lsp.program import lookup

    assert Prefilter().relevant([regular, namespace]) == {str(namespace)}
    roots = lookup.search_roots(str(regular), ())
    assert prefilter._find_absolute(str(project), "shared.defs") == \
        lookup.find_absolute("shared.defs", roots) == str(lib / "shared" / "defs.py")

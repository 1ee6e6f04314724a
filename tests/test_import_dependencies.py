"""WG110 for a package outside JAX that importing a JAX module needs, checked against CPython.

Each case is an environment made from the suite's own: its site-packages with one package taken
out (symlinks to every other entry), and a `bin/python` that is this Python, so that CPython runs
as a virtual environment there. Each statement is run by that Python and analysed with that
environment active; both must agree: the same verdict, the same line, the same message — or the
analyzer is silent where the failure is not proven (`NOT_PROVEN`, by design).

On JAX 0.10.2, `jax.experimental.pallas.mosaic_gpu` imports absl-py, which jax does not require:
a fresh `pip install jax` fails there with `No module named 'absl'`. JAX 0.12 no longer does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wgmma_lsp import environment
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

STATEMENTS = [
    "import jax",
    "from jax.experimental.pallas import mosaic_gpu as plgpu",
    "import jax.experimental.pallas.mosaic_gpu as plgpu",
    "from jax.experimental import pallas as pl",
    "try:\n    from jax.experimental.pallas import mosaic_gpu as plgpu\nexcept ImportError:\n    plgpu = None",
]

#: Packages taken out, one at a time ("" takes nothing out).
REMOVED = ["", "absl", "opt_einsum", "ml_dtypes", "numpy", "jaxlib", "scipy"]

#: Where Python raises and the analyzer says nothing, by design: which import fails first is not
#: proven there. jaxlib, imported before anything, requires numpy, ml_dtypes and scipy and may
#: import them first from its extension (CPython then says "Encountered an error while
#: initializing the extension"); without jaxlib, jax raises its own message from a `try`.
NOT_PROVEN = {"numpy", "ml_dtypes", "scipy", "jaxlib"}


def _site() -> Path:
    return next(Path(sys.prefix).glob("lib/python3*/site-packages"))


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not (Path(sys.prefix) / "pyvenv.cfg").is_file():
        pytest.skip("the suite does not run in a virtual environment")
    site = _site()
    out = {}
    for removed in REMOVED:
        prefix = tmp_path_factory.mktemp(f"env_{removed or 'all'}")
        new = prefix / site.relative_to(sys.prefix)
        new.mkdir(parents=True)
        for entry in site.iterdir():
            name = entry.name
            if removed and (name == removed or name.startswith((removed + ".", removed + "-",
                                                                 removed + "_"))):
                continue
            (new / name).symlink_to(entry)
        (prefix / "pyvenv.cfg").write_text((Path(sys.prefix) / "pyvenv.cfg").read_text())
        (prefix / "bin").mkdir()
        (prefix / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
        out[removed] = prefix
    return out


def _cpython(prefix: Path, source: str, tmp_path: Path) -> tuple[str, int, str] | None:
    """(exception type, line, message) of running `source` as a file there; None: it ran."""
    script = tmp_path / "snippet.py"
    script.write_text(source)
    probe = (
        "import sys, traceback\n"
        f"src = open({str(script)!r}).read()\n"
        "try:\n"
        f"    exec(compile(src, {str(script)!r}, 'exec'), {{'__name__': 'snippet'}})\n"
        "except BaseException as e:\n"
        f"    line = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == {str(script)!r}]\n"
        "    print(type(e).__name__, line[-1] if line else 0, str(e), sep='\\x00', end='')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(prefix / "bin" / "python"), "-I", "-c", probe], capture_output=True, check=False,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    if not done.stdout:
        return None
    kind, line, message = done.stdout.split("\x00", 2)
    return kind, int(line), message


def _ours(prefix: Path, source: str) -> list[tuple[str, int, str]]:
    before = environment.active()
    environment.activate(environment.discover(str(prefix / "bin" / "python"), "--python"))
    try:
        found = diagnostics(analyze(source, "snippet.py"))
    finally:
        environment.activate(before)
    return [(d.code, d.span.line + 1, d.message) for d in found if d.code in ("WG110", "WG111")]


@pytest.mark.parametrize("removed", REMOVED)
@pytest.mark.parametrize("statement", STATEMENTS)
def test_same_verdict_as_cpython(envs: dict[str, Path], removed: str, statement: str,
                                 tmp_path: Path) -> None:
    prefix = envs[removed]
    source = statement + "\n"
    python = _cpython(prefix, source, tmp_path)
    ours = _ours(prefix, source)
    if python is None:
        assert ours == [], f"CPython imports it, the analyzer says {ours}"
        return
    kind, line, message = python
    if removed in NOT_PROVEN and ours == []:
        return
    assert kind == "ModuleNotFoundError", python
    assert ours == [("WG110", line, message)], (python, ours)


def test_the_cache_only_says_nothing_is_missing(envs: dict[str, Path]) -> None:
    """A missing package is confirmed against JAX's files as they are: a cache entry claiming an
    import JAX's files do not hold reports nothing."""
    from wgmma_lsp.interpret import jax_import_graph
    from wgmma_lsp.models import jax_imports

    prefix = envs["absl"]
    before = environment.active()
    environment.activate(environment.discover(str(prefix / "bin" / "python"), "--python"))
    try:
        real = jax_import_graph.events("jax")
        assert real is not None and not any(e.name == "absl" and e.guard is None for e in real)
        forged = [jax_import_graph.Event("absl", "jax", 1, None)]
        jax_import_graph._memory["jax"] = forged
        assert jax_imports._missing_dependency("jax") is None
    finally:
        jax_import_graph._memory.pop("jax", None)
        environment.activate(before)

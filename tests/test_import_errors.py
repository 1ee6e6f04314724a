"""WG110 module-missing and WG111 import-name-missing, checked against CPython's import system on
the installed JAX: each import statement is run here (the suite's own JAX is the analysed one)
and analysed; both must agree — the same verdict, the same line, the same message.

The statements: 0.12.1's `jax.pallas` spellings (missing before it), modules and names no JAX
has, every name each Pallas module exports or lists in `_deprecations` (removed ones raise), and
names bound in those modules by plain `import`s, which the export table does not list."""

from __future__ import annotations

import importlib
import warnings

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import jax_source

FIXED = [
    "import jax.pallas as pl",
    "import jax.pallas.mosaic_gpu as plgpu",
    "import jax.pallas.mosaic_gpu",
    "from jax.pallas import mosaic_gpu as plgpu",
    "from jax.pallas.mosaic_gpu import kernel",
    "from jax import pallas as pl",
    "from jax import numpy as jnp, pallas",
    "import jax.experimental.pallas.mosaic_gpu as plgpu",
    "from jax.experimental import pallas as pl",
    "from jax.experimental.pallas import mosaic_gpu, tpu, triton",
    "from jax.experimental.pallas import nope",
    "from jax.experimental.pallas.mosaic_gpu import nope, kernel",
    "from jax.experimental.pallas.mosaic_gpu import kernel, nope",
    "from jax.experimental.pallas import typing",
    "import jax.numpy as jnp, jax.experimental.nosuch",
    "import jax.nosuch.sub as s",
    "from jax.experimental.nosuch import thing",
    "from jax.experimental.pallas.ops import gpu",
    "from jax.experimental.pallas.ops.gpu import nosuch_kernel_module",
    "import jax.experimental.pallas.ops.gpu.nosuch_kernel_module",
    "from jax import nosuch",
    "from jax import numpy, lax",
    "from jax.numpy import nosuch",
]

#: Where Python raises and the analyzer stays silent, by design: absence is not proven there.
NOT_PROVEN = {
    # `import typing` … `del typing`: the source spells the name, so some statement may bind it.
    "from jax.experimental.pallas import typing": "the module's source spells `typing`",
}

PALLAS = ["jax.experimental.pallas", "jax.experimental.pallas.mosaic_gpu", "jax.pallas", "jax.pallas.mosaic_gpu"]


def _exported() -> list[str]:
    out = []
    for module in PALLAS:
        for name in sorted(jax_source.exports_of(module) or {}):
            out.append(f"from {module} import {name}")
    return out


STATEMENTS = FIXED + _exported()


def python_says(statement: str) -> tuple[str, str] | None:
    """(exception class, message) of running the statement here, None when it imports."""
    importlib.invalidate_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(statement, "<statement>", "exec"), {})  # noqa: S102 (the oracle: Python itself)
        except ImportError as e:
            return type(e).__name__, str(e)
    return None


def analyzer_says(statement: str) -> set[tuple[int, str, str]]:
    found = diagnostics(analyze(statement + "\n", "/tmp/wgmma_import_probe.py"))
    return {(d.span.line + 1, d.code, d.message) for d in found if d.code in ("WG110", "WG111")}


EXCEPTION = {"WG110": "ModuleNotFoundError", "WG111": "ImportError"}


@pytest.mark.parametrize("statement", STATEMENTS)
def test_import_verdict_is_python_s(statement: str) -> None:
    raised = python_says(statement)
    ours = analyzer_says(statement)
    if raised is None:
        assert ours == set()
        return
    exc, message = raised
    if statement in NOT_PROVEN:
        assert ours == set(), NOT_PROVEN[statement]
        return
    assert {(line, EXCEPTION[code], msg) for line, code, msg in ours} == {(1, exc, message)}


def test_some_statements_fail_on_every_jax() -> None:
    """Not vacuous: names no JAX has fail on every version, and the analyzer reports them."""
    assert python_says("from jax.experimental.pallas import nope") is not None
    assert analyzer_says("from jax.experimental.pallas import nope")
    assert len(_exported()) > 100  # the export tables were read


@pytest.mark.parametrize("handler", ["ImportError", "ModuleNotFoundError", "(ImportError, AttributeError)",
                                     "Exception"])
def test_a_fallback_import_is_not_reported(handler: str) -> None:
    source = (f"try:\n    import jax.pallas.mosaic_gpu as plgpu\n    from jax import pallas as pl\n"
              f"except {handler}:\n    from jax.experimental.pallas import mosaic_gpu as plgpu\n"
              f"    from jax.experimental import pallas as pl\n")
    assert {d.code for d in diagnostics(analyze(source, "/tmp/wgmma_import_probe.py"))} & {"WG110", "WG111"} == set()


def test_a_handler_for_another_error_does_not_hide_it() -> None:
    source = "try:\n    import jax.nosuch as x\nexcept AttributeError:\n    x = None\n"
    assert [(d.span.line, d.code) for d in diagnostics(analyze(source, "/tmp/wgmma_import_probe.py"))
            if d.code == "WG110"] == [(1, "WG110")]


def _fixed(statement: str) -> list[str]:
    """The statement after each quick fix offered on it."""
    from test_fixes_against_jax import apply

    return [apply(statement + "\n", fix).rstrip("\n")
            for d in diagnostics(analyze(statement + "\n", "/tmp/wgmma_import_probe.py"))
            if d.code in ("WG110", "WG111") for fix in d.fixes]


@pytest.mark.parametrize("statement", FIXED)
def test_the_quick_fix_makes_the_import_work(statement: str) -> None:
    """The fix (0.12.1's `jax.pallas` paths → `jax.experimental.pallas`, offered where the
    installed JAX has that module) makes Python import it, and the analyzer agrees."""
    for fixed in _fixed(statement):
        assert fixed != statement
        assert python_says(fixed) is None, fixed
        assert analyzer_says(fixed) == set(), fixed


def test_the_new_paths_get_a_quick_fix_where_they_are_missing() -> None:
    """Not vacuous: where this JAX lacks `jax.pallas`, its spellings get a fix each."""
    if python_says("import jax.pallas") is None:
        pytest.skip("this JAX has jax.pallas (0.12.1 and later)")
    for statement in ("import jax.pallas as pl", "import jax.pallas.mosaic_gpu as plgpu",
                      "from jax.pallas import mosaic_gpu as plgpu", "from jax.pallas.mosaic_gpu import kernel",
                      "from jax import pallas as pl"):
        assert len(_fixed(statement)) == 1, statement
    assert _fixed("import jax.pallas") == []  # the code says `jax.pallas.…`: not fixed by the import

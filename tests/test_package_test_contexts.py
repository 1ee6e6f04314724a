"""Contexts for library code from its package's tests (entry/test_contexts.py, op_dispatch.py).

tests/fixtures/lib_tests/mylib is a small kernel library shaped like tokamax: `kernel.py` has a
kernel function nothing in its file calls; `op.py` calls it through the op's dispatch (`Op.__call__`
binds with `inspect.signature`, then `self._fwd(..., config=...)`; `_get_kernel_module()` picks the
module by the GPU); `op_test.py` is an absl parameterized test calling the op with concrete arrays.
Opened as it is, the kernel module gets its shapes and dtypes from the test's cases, each a context
named by the test and its parameters; a finding proven in every case is JAX's error, one proven in
some names them (a warning). Ground truth: real JAX tracing the kernel with the test's arrays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from jax_oracle import trace_file

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.model import Severity

FIXTURE = Path(__file__).parent / "fixtures" / "lib_tests" / "mylib"
#: What the test's cases hand the kernel, for JAX (op.py's default `scale`, heuristics' config).
CASES = {"m=128, n=64": "bf16[128,64]", "m=256, n=128": "bf16[256,128]"}


def library(tmp_path: Path, replace: tuple[str, str] | None = None) -> tuple[Path, str]:
    """A copy of the fixture package, its kernel module changed by `replace`."""
    pkg = tmp_path / "mylib"
    shutil.copytree(FIXTURE, pkg)
    path = pkg / "kernel.py"
    source = path.read_text()
    if replace is not None:
        assert replace[0] in source
        source = source.replace(*replace)
        path.write_text(source)
    return path, source


def line_of(source: str, text: str) -> int:
    (line,) = [i for i, t in enumerate(source.splitlines(), 1) if text in t]
    return line


def loud(path: Path, source: str) -> list[tuple[int, str, Severity, str]]:
    analysis = analyze(source, str(path))
    return sorted((d.span.line + 1, d.code, d.severity, d.message) for d in diagnostics(analysis)
                  if d.severity in (Severity.ERROR, Severity.WARNING))


def jax_says(tmp_path: Path, source: str) -> dict[str, set[tuple[int | None, str]]]:
    out = {}
    for label, spec in CASES.items():
        traced = tmp_path / f"traced_{len(out)}.py"
        traced.write_text(source + "\n\ndef _as_the_op_calls_it(x):\n  return scale_kernel(x, scale=lambda v: v * 2.0, "
                          f"config=get_heuristics_config(None))\n# wgmma-lsp: trace _as_the_op_calls_it({spec})\n")
        out[label] = {(v.line, v.message) for v in trace_file(traced, lower=True) if v.message is not None}
    return out


def test_the_kernel_module_as_opened_hovers_with_the_tests_shapes_and_dtypes() -> None:
    path = FIXTURE / "kernel.py"
    source = path.read_text()
    analysis = analyze(source, str(path))
    line = line_of(source, "x_smem[...] = y.astype") - 1
    text = source.splitlines()[line]
    smem = hover(analysis, line, text.index("x_smem"))
    assert smem is not None
    assert "`Ref<smem>{bfloat16[64,64]}` (with m=128, n=64, from ScaleOpTest.test_scale() in op_test.py" \
        in smem.markdown
    assert "`Ref<smem>{bfloat16[64,128]}` (with m=256, n=128, from ScaleOpTest.test_scale() in op_test.py" \
        in smem.markdown
    y = hover(analysis, line, text.index("y.astype"))
    assert y is not None and "float32[64,64]" in y.markdown  # `scale` is the op's default, followed
    assert loud(path, source) == []


def test_a_mistake_every_test_case_reaches_is_jaxs_error(tmp_path: Path) -> None:
    """A float32 scratch for a bfloat16 input: JAX rejects the copy in both cases; so do we, an
    error (proven in every context that reaches the line), with JAX's message."""
    path, source = library(tmp_path, ("plgpu.SMEM((config.block_m, n), x.dtype)",
                                      "plgpu.SMEM((config.block_m, n), jnp.float32)"))
    line = line_of(source, "plgpu.copy_gmem_to_smem(")
    got = [g for g in loud(path, source) if g[0] == line]
    assert [(sev) for _, _, sev, _ in got] == [Severity.ERROR]
    message = got[0][3]
    assert " from " not in message  # every context: no context named
    jax = jax_says(tmp_path, source)
    assert all((line, message) in v for v in jax.values())


def test_a_mistake_one_test_case_reaches_is_jaxs_error_naming_it(tmp_path: Path) -> None:
    """Only the n=128 case stores a float32 value into the bfloat16 scratch: JAX's error for that
    case, naming it (as a config context's finding is: tests/test_config_contexts.py); JAX
    rejects that case at that line and accepts the other."""
    path, source = library(tmp_path, ("    x_smem[...] = y.astype(x_smem.dtype)\n",
                                      "    x_smem[...] = y if n > 64 else y.astype(x_smem.dtype)\n"))
    line = line_of(source, "x_smem[...] = y if n > 64")
    got = [g for g in loud(path, source) if g[0] == line]
    assert [(sev) for _, _, sev, _ in got] == [Severity.ERROR]
    message = got[0][3]
    assert "(with m=256, n=128, from ScaleOpTest.test_scale() in op_test.py at line" in message
    jax = jax_says(tmp_path, source)
    assert jax["m=128, n=64"] == set()
    assert any(ln == line and message.startswith(msg) for ln, msg in jax["m=256, n=128"])


def test_without_the_test_module_the_kernel_has_no_concrete_context(tmp_path: Path) -> None:
    """The same package without op_test.py: nothing gives the kernel its arrays (the config still
    comes from get_heuristics_config), so the scratch's dtype is only known by name."""
    path, source = library(tmp_path)
    (path.parent / "op_test.py").unlink()
    analysis = analyze(source, str(path))
    line = line_of(source, "x_smem[...] = y.astype") - 1
    shown = hover(analysis, line, source.splitlines()[line].index("x_smem"))
    assert shown is None or "bfloat16" not in shown.markdown


def test_the_python_the_dispatch_needs(tmp_path: Path) -> None:
    """Two pieces of Python the op's dispatch runs on, as CPython does: calling an instance runs
    its class's `__call__`; a jax.Array is no tuple (`jnp.stack(w) if isinstance(w, tuple) else w`)."""
    source = ("import jax, jax.numpy as jnp\n"
              "class Double:\n  def __call__(self, v):\n    return v * 2\n"
              "def main():\n"
              "  four = Double()(2)\n"
              "  w = jnp.zeros((64, 2, 8), jnp.bfloat16)\n"
              "  is_tuple = isinstance(w, tuple)\n"
              "  is_mine = isinstance(w, Double)\n")
    path = tmp_path / "snippet.py"
    path.write_text(source)
    analysis = analyze(source, str(path))
    lines = source.splitlines()

    def shown(name: str) -> str:
        line = next(i for i, t in enumerate(lines) if t.strip().startswith(f"{name} ="))
        h = hover(analysis, line, lines[line].index(name))
        assert h is not None
        return h.markdown

    assert shown("four") == "**four**: `4`"
    assert shown("is_tuple") == "**is_tuple**: `False`" and shown("is_mine") == "**is_mine**: `False`"


def test_a_test_class_skipped_by_a_marker_still_says_how_the_op_is_called(tmp_path: Path) -> None:
    """`@pytest.mark.skip(reason="Too slow for OSS regression tests.")` on the class (tokamax's
    attention test does this): the marker says when the test runs, not what it passes; its cases
    are still contexts."""
    path, source = library(tmp_path)
    test = path.parent / "op_test.py"
    test.write_text(test.read_text().replace(
        "class ScaleOpTest(", "import pytest\n\n\n@pytest.mark.skip(reason='slow')\nclass ScaleOpTest("))
    analysis = analyze(source, str(path))
    line = line_of(source, "x_smem[...] = y.astype") - 1
    shown = hover(analysis, line, source.splitlines()[line].index("x_smem"))
    assert shown is not None and "`Ref<smem>{bfloat16[64,128]}` (with m=256, n=128, from ScaleOpTest" \
        in shown.markdown

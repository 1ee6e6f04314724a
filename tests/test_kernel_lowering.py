"""Lowering-time rules on `plgpu.kernel` kernels, checked against the installed JAX's Mosaic GPU
lowering on the CPU (`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`).

Unlike `pl.pallas_call` kernels (tests/test_lowering_rules.py, JAX 0.10 only: 0.12 no longer
lowers a Mosaic GPU `pallas_call`), `plgpu.kernel` lowers on every supported JAX, so these
fixtures run on each version, under the installed JAX's default lowering semantics (Lane in
0.10, Warpgroup in 0.12) unless the kernel names one. `# E[...]`/`# B[...]` comments say where
the versions differ. A fixture with no expectation for the installed JAX must lower cleanly and
get no error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, jax_expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

DIR = Path(__file__).parent / "fixtures" / "lowering_kernel"
FIXTURES = sorted(p for p in DIR.glob("*.py") if not p.name.startswith("kernel_level_"))


def _errors(source: str, path: Path) -> set[tuple[int, str, str]]:
    return {(d.span.line + 1, d.code, strip_context_note(d.message))
            for d in diagnostics(analyze(source, str(path))) if d.severity == Severity.ERROR}


def _jax(path: Path) -> set[tuple[int | None, str]]:
    return {(v.line, v.message or f"(empty {v.exc_type})")
            for v in trace_file(path, lower=True) if v.message is not None}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_kernel_lowering_fixture(path: Path) -> None:
    source = path.read_text()
    assert _errors(source, path) == expectations(source)
    assert _jax(path) == jax_expectations(source)


def test_kernel_level_error_has_no_line_in_jax_and_is_blamed_on_the_kernel() -> None:
    """wgmma.py's accumulator check runs after the kernel's frames are gone: JAX's error names
    no line of the file; ours sits on the `wgmma` call and names the kernel as where JAX raises."""
    path = DIR / "kernel_level_wgmma_acc_i32_warpgroup.py"
    source = path.read_text()
    (line, code, message), = expectations(source)
    assert _errors(source, path) == {(line, code, message)}
    assert _jax(path) == {(None, message)}
    finding, = [f for f in analyze(source, str(path)).findings if f.rule.code == code]
    kernel_line = next(i for i, text in enumerate(source.splitlines()) if "plgpu.kernel(" in text)
    assert finding.blame_line == kernel_line

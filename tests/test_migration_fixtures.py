"""Kernels whose verdict depends on the JAX version, traced *and lowered* (for CUDA, on the CPU)
by the installed JAX: `# E[>=0.12]:` / `# E[<0.12]:` name the versions that reject them.

WG093's JAX message is empty (a bare `assert rule is not None`): JAX must raise an
`AssertionError` with no text from that line. Every quick fix is applied and the result must
trace and lower cleanly in the installed JAX.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from test_fixes_against_jax import apply
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "migration").glob("*.py"))
BARE_ASSERT = {"WG093"}


def _static(source: str, path: Path) -> set[tuple[int, str, str]]:
    return {(d.span.line + 1, d.code, d.message) for d in diagnostics(analyze(source, str(path)))}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_migration_fixture(path: Path) -> None:
    source = path.read_text()
    assert expectations(source, version="any"), "a migration fixture declares its diagnostics"
    expected = expectations(source)
    assert _static(source, path) == expected
    verdicts = trace_file(path, lower=True)
    raised = {(v.line, v.message, v.exc_type) for v in verdicts if v.exc_type is not None}
    want = {(line, "" if code in BARE_ASSERT else msg, "AssertionError" if code in BARE_ASSERT else None)
            for line, code, msg in expected}
    assert {(ln, m, t if (ln, m, "AssertionError") in want else None) for ln, m, t in raised} == want, verdicts


def _fix_cases():
    for path in FIXTURES:
        source = path.read_text()
        for d in diagnostics(analyze(source, str(path))):
            for i, _ in enumerate(d.fixes):
                yield pytest.param(path, d.message, i, id=f"{path.stem}-{d.code}-fix{i}")


@pytest.mark.parametrize("path,message,index", list(_fix_cases()))
def test_migration_fix_traces_and_lowers(path: Path, message: str, index: int, tmp_path: Path) -> None:
    source = path.read_text()
    diag = next(d for d in diagnostics(analyze(source, str(path))) if d.message == message)
    fixed = apply(source, diag.fixes[index])
    out = tmp_path / path.name
    out.write_text(fixed)
    verdicts = trace_file(out, lower=True)
    assert verdicts and all(v.exc_type is None for v in verdicts), verdicts
    assert diagnostics(analyze(fixed, str(out))) == []

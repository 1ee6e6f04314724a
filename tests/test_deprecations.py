"""WG095: parameters the installed JAX deprecates, read from its source, checked against the
DeprecationWarning real JAX issues (its message, from the same line) and the migration applied.

Fixtures under tests/fixtures/deprecation carry `# W[<0.12]: WG095 …` (the warning, where that
JAX deprecates the parameter) and `# E[>=0.12]: …` (where a later JAX removed it)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from test_fixes_against_jax import apply
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.jax_deprecations import deprecated_params

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "deprecation").glob("*.py"))


def _static(source: str, path: Path, severity: Severity) -> set[tuple[int, str, str]]:
    return {(d.span.line + 1, d.code, d.message.rstrip()) for d in diagnostics(analyze(source, str(path)))
            if d.severity == severity}


def _traced_with_warnings(path: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        verdicts = trace_file(path)
    found = {(w.lineno, str(w.message)) for w in caught
             if issubclass(w.category, DeprecationWarning) and w.filename == str(path)}
    return verdicts, found


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_deprecation_warnings_are_jaxs(path: Path) -> None:
    source = path.read_text()
    assert expectations(source, "W", version="any"), "a deprecation fixture declares its warnings"
    want_warnings, want_errors = expectations(source, "W"), expectations(source, "E")
    assert _static(source, path, Severity.WARNING) == want_warnings
    assert _static(source, path, Severity.ERROR) == want_errors
    verdicts, warned = _traced_with_warnings(path)
    assert warned == {(line, msg) for line, _, msg in want_warnings}
    assert {(v.line, v.message) for v in verdicts if v.message} == {(ln, m) for ln, _, m in want_errors}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_the_migration_fix_silences_jax(path: Path, tmp_path: Path) -> None:
    source = path.read_text()
    diags = [d for d in diagnostics(analyze(source, str(path))) if d.code in ("WG095", "WG090")]
    assert diags and all(any(f.preferred for f in d.fixes) for d in diags)
    fixed = source
    for d in diags:
        fixed = apply(fixed, next(f for f in d.fixes if f.preferred))
    out = tmp_path / path.name
    out.write_text(fixed)
    verdicts, warned = _traced_with_warnings(out)
    assert not warned and verdicts and all(v.message is None for v in verdicts), (warned, verdicts)
    assert diagnostics(analyze(fixed, str(out))) == []


def test_the_reader_follows_the_source() -> None:
    fn = ast.parse('''
def kernel(body, out_shape=NotSpecified(), *, out_type=NotSpecified(), flag=None, other=None):
  if not isinstance(out_shape, api.NotSpecified):
    deprecations.warn("id", "out_shape is deprecated.", stacklevel=2)
  if flag is not None:
    warnings.warn("flag is going away", DeprecationWarning)
  if other is not None and body:  # not a test of the parameter alone: ignored
    warnings.warn("other", DeprecationWarning)
  if not isinstance(out_shape, api.NotSpecified):
    out_type = out_shape
''').body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert deprecated_params(fn) == {"out_shape": ("out_shape is deprecated.", "out_type"),
                                     "flag": ("flag is going away", None)}

"""Every fixture kernel goes through the analyzer and through real JAX; both must agree.

Fixtures under tests/fixtures/errors carry `# E: CODE message` on the line that must get the
diagnostic; JAX must raise exactly that message from exactly that line. Fixtures under
tests/fixtures/clean must get no error and must trace cleanly (`# W:` marks the warnings they
may get). `# S:` lines give the message
the analyzer must produce when no entry point supplies concrete sizes (symbolic sizes).

Where JAX versions disagree, a comment names the versions it holds for (`# E[>=0.12]: …`,
`# E[<0.12]: …`): each version's suite checks the fixture against its own JAX. An error fixture
with no error for the installed version must be clean there, and a clean fixture with an error
for it must get exactly that error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, strip_entry_points, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.rules.registry import RULES

FIXTURES = Path(__file__).parent / "fixtures"
ERROR_FIXTURES = sorted((FIXTURES / "errors").glob("*.py"))
CLEAN_FIXTURES = sorted((FIXTURES / "clean").glob("*.py"))


def static_errors(source: str, path: str, severity: Severity = Severity.ERROR) -> set[tuple[int, str, str]]:
    # Some of JAX's messages end in a space (`swap`'s); `# E:` comments cannot show it.
    return {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip()) for d in diagnostics(analyze(source, path))
            if d.severity == severity}


def jax_text(code: str, message: str) -> str:
    """What JAX's exception says for a diagnostic: its message, or nothing where JAX fails a bare
    `assert` or raises a bare exception (the rule's template is then that statement, and the
    diagnostic explains it)."""
    rule = RULES[code]
    bare = rule.template.startswith(("assert ", "raise ")) or "(JAX: AssertionError from `assert " in message
    return "" if bare else message


def _check_errors(path: Path, source: str, expected: set[tuple[int, str, str]]) -> None:
    assert static_errors(source, str(path)) == expected
    verdicts = trace_file(path)
    raised = {(v.line, v.message.rstrip() or f"(empty {v.exc_type})") for v in verdicts if v.message is not None}
    # `# B:` names JAX's own text (and line) where the diagnostic explains a bare exception.
    blamed = expectations(source, "B")
    blamed_codes = {code for _, code, _ in blamed}
    want = {(line, jax_text(code, msg) or f"(empty {RULES[code].exception})") for line, code, msg in expected
            if code not in blamed_codes} | {(line, msg) for line, _, msg in blamed}
    assert raised == want, verdicts


def lowering_only(errors: set[tuple[int, str, str]]) -> set[tuple[int, str, str]]:
    return {e for e in errors if RULES[e[1]].stage == "lower"}


def _check_clean(path: Path, source: str) -> None:
    """Clean fixtures trace cleanly. Some would still fail when lowered (most keep their SMEM
    operands untransformed, which Lane lowering rejects): the lowering-time errors the analyzer
    reports for them must be what JAX's lowering raises, from the same line."""
    errors = static_errors(source, str(path))
    lowering = lowering_only(errors)
    assert errors - lowering == set()
    assert static_errors(strip_entry_points(source), str(path)) - lowering == set()
    if lowering:
        lowered = [v for v in trace_file(path, lower=True) if v.message is not None]
        assert lowered and {(v.line, v.message) for v in lowered} <= {
            (ln, jax_text(code, msg)) for ln, code, msg in lowering}
    # `# W:` lines: wrong only on a path the analyzer cannot decide, so a warning at most.
    warnings = static_errors(source, str(path), Severity.WARNING)
    assert warnings - lowering_only(warnings) == expectations(source, "W")
    verdicts = trace_file(path)
    assert verdicts and all(v.message is None for v in verdicts), verdicts


@pytest.mark.parametrize("path", ERROR_FIXTURES, ids=lambda p: p.stem)
def test_error_fixture(path: Path) -> None:
    source = path.read_text()
    assert expectations(source, version="any"), "an error fixture must declare its expected diagnostics"
    expected = expectations(source)
    if expected:
        _check_errors(path, source, expected)
    else:  # an error on other JAX versions only: this one accepts the kernel
        _check_clean(path, source)


@pytest.mark.parametrize("path", CLEAN_FIXTURES, ids=lambda p: p.stem)
def test_clean_fixture(path: Path) -> None:
    source = path.read_text()
    expected = expectations(source)
    if expected:  # rejected by the installed JAX version only (`# E[...]:`)
        _check_errors(path, source, expected)
    else:
        _check_clean(path, source)


@pytest.mark.parametrize("path", [p for p in ERROR_FIXTURES if expectations(p.read_text(), "S")],
                         ids=lambda p: p.stem)
def test_symbolic_sizes_print_by_name(path: Path) -> None:
    source = strip_entry_points(path.read_text())
    assert static_errors(source, str(path)) == expectations(source, "S")

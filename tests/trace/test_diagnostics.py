"""JAX's verdict lands on the line JAX blames, with JAX's message (trace- and lowering-time)."""

from __future__ import annotations

import pytest

from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.trace.report import JAX_LIMITATION, SOURCE, outcome_diagnostics
from wgmma_lsp.trace.runner import TraceOutcome

from .conftest import FIXTURES, expected_errors


def _by_line(outcome: TraceOutcome) -> dict[int, str]:
    """JAX's verdicts by line (what JAX itself cannot do here, TRACE008, is not a verdict)."""
    return {d.span.line: d.message for d in outcome_diagnostics(outcome) if d.code != JAX_LIMITATION[0]}


@pytest.mark.parametrize("fixture, name", [("seed_outcome", "seed_errors.py"),
                                           ("lowering_outcome", "lowering_kernels.py"),
                                           ("kernel_api_outcome", "kernel_api_kernels.py"),
                                           ("construct_outcome", "construct_error.py")])
def test_errors_land_on_the_blamed_line(fixture: str, name: str, request: pytest.FixtureRequest) -> None:
    outcome: TraceOutcome = request.getfixturevalue(fixture)
    assert outcome.status == "ok", outcome.stderr
    assert _by_line(outcome) == expected_errors(FIXTURES / name)


def test_import_time_jax_error_names_the_import(construct_outcome: TraceOutcome) -> None:
    [d] = outcome_diagnostics(construct_outcome)
    assert d.span.col > 0  # the frame's columns: the offending call, not the whole line
    assert "imported the module" in d.related[0].message


def test_diagnostics_carry_source_severity_and_entry_note(seed_outcome: TraceOutcome) -> None:
    diags = outcome_diagnostics(seed_outcome)
    assert len(diags) == 3
    entry_lines = {e.line: e.call for e in seed_outcome.request.entries}
    for d in diags:
        assert d.source == SOURCE
        assert d.severity == Severity.ERROR
        assert d.code  # a rule code when a template matches, else TRACE001
        [note] = d.related
        assert "raised while tracing entry point" in note.message
        assert note.span.line in entry_lines
        assert entry_lines[note.span.line] in note.message


@pytest.mark.parametrize("fixture", ["lowering_outcome", "kernel_api_outcome"])
def test_lowering_errors_are_reported_as_such(fixture: str, request: pytest.FixtureRequest) -> None:
    outcome: TraceOutcome = request.getfixturevalue(fixture)
    diags = [d for d in outcome_diagnostics(outcome) if d.code != JAX_LIMITATION[0]]
    assert all("raised while lowering" in d.related[0].message for d in diags)
    mlir = [d for d in diags if "mosaic_gpu.wgmma" in d.message]
    if fixture == "kernel_api_outcome" or matches("<0.12"):
        assert mlir and mlir[0].span.col == 4  # the MLIR location carries the column


@pytest.mark.parametrize("fixture", ["lowering_outcome", "kernel_api_outcome"])
def test_clean_entry_points_trace_and_lower(fixture: str, request: pytest.FixtureRequest) -> None:
    outcome: TraceOutcome = request.getfixturevalue(fixture)
    results = outcome.entry_results
    clean = [i for i, e in enumerate(outcome.request.entries) if e.call.startswith("matmul(")]
    assert clean
    lowers = fixture == "kernel_api_outcome" or matches("<0.12")  # see the next test
    for i in clean:
        assert results[i]["error"] is None if lowers else results[i]["error"]["limitation"]
        assert results[i]["lowered"] is lowers
        assert results[i]["avals"]  # traced either way


def test_jax_limitations_are_trace_mode_problems(lowering_outcome: TraceOutcome) -> None:
    """JAX 0.12 lowers no `pl.pallas_call` Mosaic GPU kernel on the CPU: a bare `assert rule is
    not None` with Mosaic GPU params, `No supported GPU devices found` (Triton) without. That is
    said once per entry point, as a warning on the entry point, never as an error in the kernel."""
    diags = outcome_diagnostics(lowering_outcome)
    limited = [d for d in diags if d.code == JAX_LIMITATION[0]]
    if matches("<0.12"):
        assert limited == []
        return
    entries = lowering_outcome.request.entries
    assert len(limited) == len(entries) and diags == limited
    assert {d.span.line for d in limited} == {e.line for e in entries}
    for d in limited:
        assert d.severity == Severity.WARNING and "plgpu.kernel" in d.message
    messages = " ".join(d.message for d in limited)
    assert "assert rule is not None" in messages and "No supported GPU devices found" in messages


def test_cli_check_trace(capsys: pytest.CaptureFixture[str]) -> None:
    from wgmma_lsp.cli import main

    path = FIXTURES / "kernel_api_kernels.py"
    assert main(["check", "--trace", "--format", "json", str(path)]) == 1
    import json

    records = json.loads(capsys.readouterr().out)
    trace = {(r["line"] - 1, r["message"]) for r in records if r["source"] == SOURCE}
    static = {(r["line"] - 1, r["message"]) for r in records if r["source"] == "wgmma-lsp"}
    # Each error JAX raises is shown once: by the static engine where it proves it (the 32-row
    # accumulator under JAX 0.10's Lane lowering, WG010), by trace mode otherwise.
    assert trace | static == set(expected_errors(path).items())
    assert not trace & static


def test_messages_map_to_registry_rules_and_dedupe_against_static(seed_outcome: TraceOutcome) -> None:
    from wgmma_lsp.ide.model import Diagnostic
    from wgmma_lsp.rules.registry import RULES
    from wgmma_lsp.spans import Span
    from wgmma_lsp.trace.report import dedupe_against_static, template_regex

    diags = outcome_diagnostics(seed_outcome)
    for d in diags:
        matching = [r.code for r in RULES.values()
                    if (rx := template_regex(r.template)) is not None and rx.match(d.message)]
        assert d.code == (matching[0] if matching else "TRACE001")
    first = diags[0]
    same_code = Diagnostic(first.code, first.name, "worded differently", Span(first.span.line, 0, first.span.line, 1))
    same_text = Diagnostic("WG999", "x", first.message, Span(first.span.line, 3, first.span.line, 4))
    other_line = Diagnostic(first.code, first.name, first.message, Span(first.span.line + 1, 0, first.span.line + 1, 1))
    for static in ([same_code], [same_text]):
        assert first not in dedupe_against_static(diags, static)
    assert first in dedupe_against_static(diags, [other_line])


def test_readme_example_gets_jaxs_verdict_on_this_jax() -> None:
    """`check --trace examples/seed_errors.py`: JAX's own verdict (on 0.10 and 0.12 alike) is
    the three seed errors, on the lines and with the messages the static engine reports."""
    from pathlib import Path

    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics
    from wgmma_lsp.settings import Settings
    from wgmma_lsp.trace.check import trace_file

    path = Path(__file__).resolve().parents[2] / "examples" / "seed_errors.py"
    source = path.read_text()
    outcome = trace_file(path, source, Settings())
    assert outcome is not None and outcome.status == "ok", outcome
    trace = {(d.span.line, d.message) for d in outcome_diagnostics(outcome) if d.code != JAX_LIMITATION[0]}
    static = {(d.span.line, d.message) for d in diagnostics(analyze(source, str(path)))}
    assert len(trace) == 3 and trace == static

"""WG094 loop-carry-type against real JAX: JAX's message spans several lines (one per component
that differs), so each error is compared whole, with its line, to what `jax.make_jaxpr` raises
for the fixture's entry points (`# E: WG094` marks the lines; the clean twin must trace cleanly
and get no error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

DIR = Path(__file__).parent / "fixtures" / "loop_carry"


def _ours(path: Path) -> set[tuple[int, str]]:
    source = path.read_text()
    return {(d.span.line + 1, strip_context_note(d.message)) for d in diagnostics(analyze(source, str(path)))
            if d.severity == Severity.ERROR and d.code == "WG094"}


def _errors(path: Path) -> set[str]:
    source = path.read_text()
    return {d.code for d in diagnostics(analyze(source, str(path))) if d.severity == Severity.ERROR}


def test_carry_type_errors_are_jaxs_whole_message_at_jaxs_line() -> None:
    path = DIR / "carry_types.py"
    marked = {i for i, text in enumerate(path.read_text().splitlines(), 1) if "# E: WG094" in text}
    jax = {(v.line, v.message) for v in trace_file(path) if v.message is not None}
    assert {line for line, _ in jax} == marked
    assert _ours(path) == jax
    assert _errors(path) == {"WG094"}


def test_clean_twin() -> None:
    path = DIR / "carry_types_clean.py"
    verdicts = trace_file(path)
    assert verdicts and all(v.message is None for v in verdicts)
    assert _errors(path) == set()


@pytest.mark.parametrize("name", ["carry_types.py", "carry_types_clean.py"])
def test_messages_name_the_component_as_jax_does(name: str) -> None:
    for _, message in _ours(DIR / name):  # scan over (i, init); while_loop over (i, upper, init)
        assert message.startswith(("scan body function carry input and carry output must have equal types",
                                   "while_loop body function carry input and carry output must have equal types"))
        assert ("loop_carry[1]" if message.startswith("scan") else "loop_carry[2]") in message

"""The help text of an API-move finding shows the corrected call, in the installed JAX's API.

For every fix of WG090 (a call the installed signature rejects), WG095 (a deprecated parameter)
and WG062 (emit_pipeline's max_concurrent_steps against delay_release) in the fixtures, the fix's
title (`= help: …` in `wgmma-lsp check`, the code action's name in an editor) quotes a call; that
call is what the source reads after the fix is applied (long arguments shortened), and the fixed
call no longer gets the finding on this JAX.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_fixes_against_jax import apply
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.rules.fix_preview import corrected_call

FIXTURES = Path(__file__).parent / "fixtures"
API_MOVES = {"WG090", "WG095", "WG062"}
FILES = sorted(p for d in ("errors", "deprecation", "clean", "migration") for p in (FIXTURES / d).glob("*.py"))


def _cases() -> list[tuple[Path, int, str]]:
    out = []
    for p in FILES:
        for d in diagnostics(analyze(p.read_text(), str(p))):
            if d.code in API_MOVES and d.fixes:
                out.append((p, d.span.line, d.code))
    return out


CASES = _cases()


def test_some_api_moves_have_fixes() -> None:
    assert {code for _, _, code in CASES} >= {"WG062"} and len(CASES) >= 3


@pytest.mark.parametrize("path,line,code", CASES, ids=lambda x: x.name if isinstance(x, Path) else str(x))
def test_the_help_shows_the_corrected_call(path: Path, line: int, code: str) -> None:
    source = path.read_text()
    analysis = analyze(source, str(path))
    diag = next(d for d in diagnostics(analysis) if d.code == code and d.span.line == line and d.fixes)
    finding = next(f for f in analysis.findings if f.rule.code == code and f.span.line == line)
    call_span = finding.data["call_span"]
    for fix in diag.fixes:
        shown = re.findall(r"`([^`]+\(.*\))`", fix.title)
        assert shown, fix.title
        fixed = apply(source, fix)
        # The call as the fixed source spells it (the same span, grown or shrunk by the edits).
        grow = sum(len(e.new_text) - (e.span.end_col - e.span.col) for e in fix.edits
                   if e.span.end_line == call_span.end_line and e.span.line == e.span.end_line)
        end = call_span._replace(end_col=call_span.end_col + grow)
        assert shown[-1] == corrected_call(fixed, end, ())
        after = {(d.code, d.span.line) for d in diagnostics(analyze(fixed, str(path)))}
        assert (code, line) not in after, fix.title

"""Every quick fix is checked by JAX: after the edit, the error it fixes is gone from the trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Fix
from wgmma_lsp.spans import LineIndex

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "errors").glob("*.py"))
LOWERING = sorted((Path(__file__).parent / "fixtures" / "lowering").glob("*.py"))
# `plgpu.kernel` fixtures: lowered on every supported JAX (tests/test_kernel_lowering.py)
LOWERING += sorted((Path(__file__).parent / "fixtures" / "lowering_kernel").glob("*.py"))
# Rules whose documented fixes are code actions (the others explain the fix in their docs).
RULES_WITH_FIXES = {"WG001", "WG002", "WG003", "WG004", "WG057", "WG090", "WG092"}
# (WG091 offers one for the removed `plgpu.transpose_ref` only: checked by JAX like the others)
# No mechanical edit fixes these: the accumulator has to be introduced (see the rule docs).
NO_FIX_EXPECTED = {"reftype_functional.py", "reftype_output_ref.py",
                   # no edit turns these values into the accumulator's shape:
                   "shape_dot_wrong_n.py", "shape_concatenate_in_when.py", "shape_in_fori_loop.py",
                   # a keyword no JAX version takes: no rename to offer
                   "api_keyword_in_multiline_call.py"}


def apply(source: str, fix: Fix) -> str:
    lines = LineIndex(source)
    offsets = [0]
    for ln in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(ln))

    def offset(line: int, col: int) -> int:
        return offsets[line] + col

    out = source
    for edit in sorted(fix.edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        s = offset(edit.span.line, edit.span.col)
        e = offset(edit.span.end_line, edit.span.end_col)
        out = out[:s] + edit.new_text + out[e:]
    del lines
    return out


def _cases():
    for path in FIXTURES + LOWERING:
        source = path.read_text()
        for d in diagnostics(analyze(source, str(path))):
            for i, fix in enumerate(d.fixes):
                yield pytest.param(path, d.code, d.message, i, id=f"{path.stem}-{d.code}-fix{i}")


@pytest.mark.parametrize("path,code,message,index", list(_cases()))
def test_fix_makes_jax_accept(path: Path, code: str, message: str, index: int, tmp_path: Path) -> None:
    source = path.read_text()
    out = tmp_path / path.name
    # Diagnostics with the same message (two removed `plgpu.transpose_ref` on one line): their
    # fixes applied together, then again for those the edit reveals, as `check --fix` does until
    # nothing is left to fix — JAX raises at the first only, and so does the analyzer (a second
    # one is reported once the first is fixed).
    fixed = source
    for _ in range(8):
        same = [d for d in diagnostics(analyze(fixed, str(out))) if d.message == message
                and len(d.fixes) > index]
        if not same:
            break
        fixed = apply(fixed, Fix(same[0].fixes[index].title,
                                 tuple(e for d in same for e in d.fixes[index].edits),
                                 same[0].fixes[index].preferred))
    assert fixed != source
    out.write_text(fixed)
    verdicts = trace_file(out, lower=path in LOWERING)
    assert all(v.message != message for v in verdicts), verdicts
    # The analyzer agrees: the diagnostic is gone after the edit.
    assert all(d.message != message for d in diagnostics(analyze(fixed, str(out))))


def test_every_fixable_rule_offers_a_preferred_fix() -> None:
    for path in FIXTURES:
        source = path.read_text()
        expected_codes = {code for _, code, _ in expectations(source)}
        for d in diagnostics(analyze(source, str(path))):
            if d.code in RULES_WITH_FIXES and d.code in expected_codes:
                if path.name in NO_FIX_EXPECTED:
                    assert not d.fixes, (path.name, d.code)
                else:
                    assert any(f.preferred for f in d.fixes), (path.name, d.code)
                    assert sum(f.preferred for f in d.fixes) == 1, (path.name, d.code)

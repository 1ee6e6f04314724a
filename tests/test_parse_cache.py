"""A kernel module's analysis reads its package's test and op modules again each time (a test
module that imports the document is interpreted again: entry/test_contexts.py,
program/program.py); their unchanged text is not parsed again. The results are those of a
fresh parse, and an edited module is parsed anew."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover_text import describe

FIXTURE = Path(__file__).parent / "fixtures" / "lib_tests" / "mylib"


def _result(path: Path) -> tuple:
    analysis = analyze(path.read_text(), str(path))
    return (sorted((d.span.line, d.code, d.message) for d in diagnostics(analysis)),
            sorted((str(span), [describe(v) for v in r.values], list(r.contexts))
                   for span, r in analysis.records.items()))


def _parsed_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(source)
        return parse(source, *args, **kwargs)
    monkeypatch.setattr(ast, "parse", counted)
    return seen


def test_siblings_are_parsed_once_while_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "mylib"
    shutil.copytree(FIXTURE, pkg)
    kernel, test = pkg / "kernel.py", pkg / "op_test.py"
    first = _result(kernel)
    parsed = _parsed_texts(monkeypatch)
    again = _result(kernel)
    assert again == first
    assert test.read_text() not in parsed  # (read again, not parsed again)
    assert any("kernel" in t for t in parsed)  # the document itself is parsed every time
    # An edited test module is parsed anew, and its new text is what the analysis reads.
    test.write_text(test.read_text() + "\n\nEDITED = 1\n")
    parsed.clear()
    edited = _result(kernel)
    assert test.read_text() in parsed
    assert edited[0] == first[0]

"""Seeded fuzz: a few hundred typing-like edits of shipped kernels and the seed example. Every
edit is analysed without an exception, parsing a bounded multiple of its text (linear), with syntax
errors inside the document, and the kernels the edit did not touch keep their findings."""

from __future__ import annotations

import ast
import importlib.util
import random
import sys
from pathlib import Path

import pytest

from wgmma_lsp import syntax, syntax_repair, syntax_spans, syntax_text
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from fuzz_edits import mutate  # noqa: E402

SEED = ROOT / "examples" / "seed_errors.py"


def _kernel(name: str) -> Path | None:
    spec = importlib.util.find_spec("jax")
    if spec is None or spec.origin is None:
        return None
    p = Path(spec.origin).parent / "experimental" / "pallas" / "ops" / "gpu" / name
    return p if p.is_file() else None


FILES = [(p, n) for p, n in ((SEED, 200), (_kernel("hopper_matmul_mgpu.py"), 80),
                             (_kernel("attention_mgpu.py"), 30)) if p is not None]


@pytest.mark.parametrize("path,count", FILES, ids=lambda p: getattr(p, "name", str(p)))
def test_seeded_edits(path: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    source = path.read_text()
    rng = random.Random(1234)
    parsed_chars: list[int] = []

    class CountingAst:
        """`ast` as the syntax layer sees it, counting what it parses (only its parses: facts
        read once from the installed JAX's source are not the document's)."""

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(ast, name)

        def parse(self, text, *a, **k):  # type: ignore[no-untyped-def]
            parsed_chars.append(len(text.lstrip("\n")))  # leading newlines only keep line numbers
            return ast.parse(text, *a, **k)

    for part in (syntax, syntax_text, syntax_spans, syntax_repair):  # the syntax layer's modules
        monkeypatch.setattr(part, "ast", CountingAst())
    for _ in range(count):
        text = mutate(source, rng)
        parsed_chars.clear()
        analysis = analyze(text, str(path))
        # linear: each line is parsed a bounded number of times (twice per level of nesting
        # it sits in, at most), never once per error or per line
        assert sum(parsed_chars) <= 16 * len(text) + 10_000
        diagnostics(analysis)
        n_lines = len(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        for span, message in analysis.syntax_errors:
            assert 0 <= span.line <= span.end_line < n_lines and message


def test_untouched_kernels_keep_their_findings() -> None:
    """An edit inside one kernel of the seed example leaves the other kernels' findings (the
    wrappers that call them are left alone: breaking a caller may change what is proven)."""
    source = SEED.read_text()
    lines = source.split("\n")
    clean = {(d.code, d.span.line) for d in diagnostics(analyze(source))}
    assert len(clean) == 3
    rng = random.Random(99)
    end_of_kernels = next(i for i, ln in enumerate(lines) if ln.startswith("def matmul("))
    body = [i for i, ln in enumerate(lines[:end_of_kernels]) if ln.startswith("    ")]  # kernel bodies
    kept = 0
    for _ in range(150):
        k = rng.choice(body)
        broken = list(lines)
        broken[k] = broken[k][: rng.randrange(len(broken[k]) + 1)] + rng.choice(["(", ":", " =", ",", "["])
        text = "\n".join(broken)
        try:
            ast.parse(text)
            continue  # still valid Python: not the point here
        except SyntaxError:
            pass
        got = {(d.code, d.span.line) for d in diagnostics(analyze(text))}
        func_of = _enclosing_def(lines)
        others = {(c, ln) for c, ln in clean if func_of[ln] != func_of[k]}
        assert others <= got, (k, broken[k], others - got)
        kept += 1
    assert kept > 50


def _enclosing_def(lines: list[str]) -> list[int]:
    """For each line, the line of the top-level `def` it belongs to."""
    out, current = [], -1
    for i, ln in enumerate(lines):
        if ln.startswith("def "):
            current = i
        out.append(current)
    return out


def test_cpython_first_error_is_among_the_reported_ones() -> None:
    """Over seeded edits of every shipped kernel, the error CPython raises for the whole file is
    one of those reported, at its line and with its words, for nearly every edit. (The rest are
    a statement cut short inside a bracket: CPython reads the next lines into that bracket and
    stumbles later, where it is reported as "'(' was never closed" at the statement itself.)"""
    hopper = _kernel("hopper_matmul_mgpu.py")
    kernels = sorted(hopper.parent.glob("*.py")) if hopper is not None else []
    if not kernels:
        pytest.skip("jax's Pallas GPU kernels are not installed")
    rng = random.Random(7)
    broken = agreeing = 0
    # A fixed number of edits, whatever the number of kernels the installed JAX ships (18 files in
    # 0.10.2 and 0.12.0.1; 0.12.1 removed six Triton kernels): 30 a file there, 45 in 0.12.1.
    per_file = -(-540 // len(kernels))
    for path in kernels:
        source = path.read_text()
        for _ in range(per_file):
            text = mutate(source, rng)
            try:
                ast.parse(text)
                continue
            except SyntaxError as e:
                cpython = (e.lineno - 1, e.msg)
            broken += 1
            agreeing += cpython in {(span.line, msg) for span, msg in syntax.parse(text).errors}
    assert broken > 300 and agreeing >= 0.97 * broken, (agreeing, broken)  # 361 of 363 (0.10.2), 341 of 346 (0.12.1)

"""Lowering-time rules, checked against JAX's Mosaic GPU lowering on the CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`, which assumes sm_90), under the
lowering semantics each fixture's kernel is compiled with (Lane, JAX 0.10's default, or
Warpgroup via `plgpu.CompilerParams(lowering_semantics=...)`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.jax_version import installed

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "lowering").glob("*.py"))

pytestmark = pytest.mark.skipif(
    installed() is None or installed()[:2] != (0, 10),
    reason="the lowering fixtures record JAX 0.10's lowering messages")


def jax_expectations(source: str) -> set[tuple[int, str]]:
    """What JAX must raise, and where: the diagnostic's own line and message, unless a
    `# B: CODE message` comment names the line JAX blames and JAX's text (kernel-level errors,
    bare asserts, generic layout-inference failures), which the diagnostic must quote."""
    expected = expectations(source)
    blamed = expectations(source, "B")
    blamed_codes = {code for _, code, _ in blamed}
    for _, code, jax_msg in blamed:
        ours = [msg for _, c, msg in expected if c == code]
        assert ours, f"B: {code} without an E: {code}"
        if not jax_msg.startswith("(empty "):
            assert all(jax_msg in msg for msg in ours), "the diagnostic must keep JAX's text"
    return ({(ln, msg) for ln, code, msg in expected if code not in blamed_codes}
            | {(ln, msg) for ln, _, msg in blamed})


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_lowering_fixture(path: Path) -> None:
    source = path.read_text()
    expected = expectations(source)
    static = {(d.span.line + 1, d.code, strip_context_note(d.message)) for d in diagnostics(analyze(source, str(path)))}
    assert static == expected
    verdicts = trace_file(path, lower=True)
    got = {(v.line, v.message or f"(empty {v.exc_type})") for v in verdicts if v.message is not None}
    assert got == jax_expectations(source)

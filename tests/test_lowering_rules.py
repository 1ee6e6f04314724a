"""Lowering-time rules, checked against JAX's Mosaic GPU lowering on the CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`, which assumes sm_90), under the
lowering semantics each fixture's kernel is compiled with (Lane, JAX 0.10's default, or
Warpgroup via `plgpu.CompilerParams(lowering_semantics=...)`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, jax_expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.jax_source import pallas_call_lowers_mosaic_gpu
from wgmma_lsp.interpret.jax_version import installed

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "lowering").glob("*.py"))

LANE_JAX = installed() is not None and installed()[:2] == (0, 10)
lane_only = pytest.mark.skipif(not LANE_JAX, reason="the lowering fixtures record JAX 0.10's lowering messages")


@pytest.mark.skipif(LANE_JAX or pallas_call_lowers_mosaic_gpu() is not False,
                    reason="this JAX lowers these pallas_call kernels")
@pytest.mark.parametrize("path", [p for p in FIXTURES if "pl.pallas_call(" in p.read_text()], ids=lambda p: p.stem)
def test_nothing_claimed_where_jax_cannot_lower_pallas_call(path: Path) -> None:
    """JAX 0.12 lowers these `pl.pallas_call` kernels with Triton (no Mosaic GPU params) or not
    at all (WG093): no lowering verdict of JAX can be checked here, so none may be claimed."""
    from wgmma_lsp.rules.registry import RULES

    source = path.read_text()
    codes = {d.code for d in diagnostics(analyze(source, str(path)))}
    assert {c for c in codes if RULES[c].stage == "lower"} <= {"WG093"}


@lane_only
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_lowering_fixture(path: Path) -> None:
    source = path.read_text()
    expected = expectations(source)
    static = {(d.span.line + 1, d.code, strip_context_note(d.message)) for d in diagnostics(analyze(source, str(path)))}
    assert static == expected | expectations(source, "W")  # W: deprecation warnings (WG095)
    verdicts = trace_file(path, lower=True)
    got = {(v.line, v.message or f"(empty {v.exc_type})") for v in verdicts if v.message is not None}
    assert got == jax_expectations(source)

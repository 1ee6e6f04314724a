"""Lowering-time rules, checked against JAX's Mosaic GPU lowering on the CPU
(`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`, which assumes sm_90)."""

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
    reason="the lowering rules claim JAX 0.10's Lane lowering only")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_lowering_fixture(path: Path) -> None:
    source = path.read_text()
    expected = expectations(source)
    static = {(d.span.line + 1, d.code, strip_context_note(d.message)) for d in diagnostics(analyze(source, str(path)))}
    assert static == expected
    verdicts = trace_file(path, lower=True)
    assert {(v.line, v.message) for v in verdicts if v.message} == {(ln, msg) for ln, _, msg in expected}


def test_warpgroup_semantics_are_not_claimed() -> None:
    source = (Path(__file__).parent / "fixtures" / "lowering" / "acc_tile_small_m.py").read_text()
    warpgroup = source.replace(
        "      out_specs=plgpu.BlockSpec(memory_space=plgpu.SMEM),\n  )(a, b)",
        "      out_specs=plgpu.BlockSpec(memory_space=plgpu.SMEM),\n"
        "      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),\n"
        "  )(a, b)")
    assert warpgroup != source
    assert diagnostics(analyze(warpgroup, "warpgroup.py")) == []

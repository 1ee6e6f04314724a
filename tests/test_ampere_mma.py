"""`plgpu.mma` (models/ampere_mma.py) with operands whose rank is not known: nothing is decided,
nothing raised (found by typing-like edits of tokamax's attention sm80: `carry[` left unclosed
made an operand of unknown shape, and the model took its `len`)."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

FIXTURE = Path(__file__).parent / "fixtures" / "clean" / "ampere_mma.py"


def test_an_operand_of_unknown_rank_decides_nothing(monkeypatch) -> None:
    monkeypatch.setenv("WGMMA_LSP_STRICT", "1")  # a model's exception fails the test
    source = FIXTURE.read_text()
    reshaped = source.replace(
        "plgpu.layout_cast(a_smem[...], plgpu.Layout.MMA_LHS(jnp.bfloat16))",
        "plgpu.layout_cast(jnp.reshape(a_smem[...], unknown_shape()), plgpu.Layout.MMA_LHS(jnp.bfloat16))")
    assert reshaped != source
    before = {(d.code, d.span.line) for d in diagnostics(analyze(source, str(FIXTURE)))}
    after = {(d.code, d.span.line) for d in diagnostics(analyze(reshaped, str(FIXTURE)))
             if d.code.startswith("WG1")}
    assert after <= before  # (JAX 0.10: the WG091 at `plgpu.mma` both times; 0.12: nothing)

"""Shared memory per kernel (WG032 and the hover on pallas_call / plgpu.kernel), checked against
the number JAX's Mosaic GPU lowering computes: with its SMEM bound patched to 0, JAX reports
`smem_bytes=...` for every kernel, which must be the analyzer's total."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.interpret.jax_version import installed

LOWERING = Path(__file__).parent / "fixtures" / "lowering"
CLEAN = [p for p in sorted(LOWERING.glob("*.py")) if not expectations(p.read_text())]

pytestmark = pytest.mark.skipif(installed() is None or installed()[:2] != (0, 10),
                                reason="SMEM accounting of JAX 0.10's Mosaic GPU lowering")


def jax_smem_bytes(path: Path) -> set[int]:
    from jax.experimental.mosaic.gpu import core as mgpu_core

    saved = mgpu_core._SMEM_SIZE_BOUND
    mgpu_core._SMEM_SIZE_BOUND = 0
    try:
        verdicts = trace_file(path, lower=True)
    finally:
        mgpu_core._SMEM_SIZE_BOUND = saved
    out = set()
    for v in verdicts:
        m = re.search(r"smem_bytes=(\d+) > max_smem_bytes=0", v.message or "")
        assert m, v
        out.add(int(m.group(1)))
    return out


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_smem_total_is_jaxs(path: Path) -> None:
    analysis = analyze(path.read_text(), str(path))
    ours = {u.smem_bytes for usages in analysis.smem.values() for u in usages if u.complete}
    assert ours, "every lowering fixture's kernel is sized"
    assert ours == jax_smem_bytes(path)


def test_hover_on_the_kernel_call_shows_its_shared_memory() -> None:
    path = LOWERING / "smem_budget_scopes_warpgroup.py"
    source = path.read_text()
    line = next(i for i, ln in enumerate(source.splitlines()) if "plgpu.kernel(" in ln)
    info = hover(analyze(source, str(path)), line, source.splitlines()[line].index("kernel"))
    assert info is not None
    assert "Shared memory: 196,640 bytes of 232,448 (sm_90)" in info.markdown
    assert "plgpu.SMEM(float32[128,128]): 65,536 B" in info.markdown

"""`pl.core_map(plgpu.WarpMesh(...))` inside a kernel: the warps are followed as threads only when
they are the whole kernel (hazards/warps.py). The pairs in tests/fixtures/races/ (`warp_mesh_*`)
check the warnings against JAX's detector (tests/test_races.py); these kernels check the silence
where the warpgroup also runs operations before or after the warps, which JAX orders with every
warp (gpu_callbacks.py: sync_warps_with_warpgroup / sync_warpgroup_with_warps): jax 0.12's detector
finds them race-free, and a thread analysis that took the warpgroup's operations for every warp's
would warn there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret.jax_version import installed

sys.path.insert(0, str(Path(__file__).resolve().parent))
from race_oracle import detect_many  # noqa: E402

KERNELS = sorted((Path(__file__).parent / "fixtures" / "races_warps").glob("*.py"))


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.stem)
def test_warpgroup_operations_around_the_warps_silence_them(path: Path) -> None:
    found = [d for d in diagnostics(analyze(path.read_text(), str(path))) if d.code.startswith("WG2")]
    assert found == []


@pytest.mark.skipif((installed() or (0,))[:2] < (0, 12), reason="jax 0.10's interpret mode has no WarpMesh threads")
def test_the_detector_finds_them_race_free() -> None:
    for path, verdict in detect_many(KERNELS).items():
        assert verdict.error is None, (path, verdict.error)
        assert verdict.found is False and verdict.races == [], (path, verdict.races)

"""The kernels shipped inside the installed jax are correct code: no error may be reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity


def _kernel_files() -> list[Path]:
    import jax

    root = Path(jax.__file__).parent / "experimental" / "pallas" / "ops" / "gpu"
    return sorted(root.glob("*.py"))


KERNELS = _kernel_files()


def test_kernels_found() -> None:
    assert len(KERNELS) >= 10  # jax 0.10.2 ships 17 files here


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.name)
def test_no_error_on_shipped_kernel(path: Path) -> None:
    analysis = analyze(path.read_text(), str(path))
    errors = [d for d in diagnostics(analysis) if d.severity == Severity.ERROR]
    assert errors == []
    assert analysis.note is None  # analysed to the end, not cut short by the step budget


@pytest.mark.parametrize("path", [p for p in KERNELS if "plgpu.ACC" in p.read_text()], ids=lambda p: p.name)
def test_shipped_kernels_accumulators_are_followed(path: Path) -> None:
    """The engine follows the shipped Hopper kernels into their accumulator scopes."""
    from wgmma_lsp.interpret.values import RefVal

    analysis = analyze(path.read_text(), str(path))
    accs = {v.describe() for r in analysis.records.values() for v in r.values
            if isinstance(v, RefVal) and v.kind == "acc"}
    assert any(a.startswith("Accumulator{float32[") for a in accs), accs

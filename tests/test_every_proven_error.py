"""Issue #7 item 5: a later JAX check proven to fail is an error even when an earlier one cannot
be decided (fixtures `wgmma_smem_acc_operands_unknown.py`, `store_dtype_shape_unknown.py` check
the messages against JAX); sizes that differ only by name are a warning naming the condition."""

from __future__ import annotations

from pathlib import Path

from jax_oracle import strip_entry_points
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

CLEAN = Path(__file__).parent / "fixtures" / "clean" / "symbolic_sizes_equal_in_context.py"


def test_sizes_differing_by_name_warn_with_the_condition() -> None:
    source = strip_entry_points(CLEAN.read_text())
    diags = diagnostics(analyze(source, str(CLEAN)))
    assert [(d.code, d.severity, d.message) for d in diags] == [
        ("WG005", Severity.WARNING,
         "Incompatible shapes for matrix multiplication: lhs=(tile_m, tile_k), "
         "rhs=b.shape=(tile_k, tile_n), acc=(tile_n, tile_m) (differs unless tile_m == tile_n)")]


def test_the_entry_point_decides_the_condition() -> None:
    assert diagnostics(analyze(CLEAN.read_text(), str(CLEAN))) == []


def test_a_name_against_a_number_is_not_warned() -> None:
    source = CLEAN.read_text().replace("plgpu.ACC((tile_n, tile_m))", "plgpu.ACC((64, tile_m))")
    source = strip_entry_points(source)
    assert diagnostics(analyze(source, str(CLEAN))) == []


def test_store_of_a_transposed_tile_warns_by_name() -> None:
    source = strip_entry_points(CLEAN.read_text()).replace(
        "      o_ref[...] = acc_ref[...]",
        "      acc_ref[...] = acc_ref[...].T\n      o_ref[...] = acc_ref[...]").replace(
        "plgpu.ACC((tile_n, tile_m))", "plgpu.ACC((tile_m, tile_n))")
    diags = [d for d in diagnostics(analyze(source, str(CLEAN))) if d.code == "WG002"]
    assert [(d.severity, d.message) for d in diags] == [
        (Severity.WARNING, "Accumulator shape (tile_m, tile_n) does not match value shape "
                           "(tile_n, tile_m) (differs unless tile_m == tile_n)")]

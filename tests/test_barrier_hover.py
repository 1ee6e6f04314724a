"""The hover on a barrier says which copies arrive on it and who waits on it, from the kernel's
record of operations (hazards/barrier_uses.py) — the lines are the source's own."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import hover

RACES = Path(__file__).parent / "fixtures" / "races"


def _hover_on(source: str, path: Path, needle: str) -> str:
    line = next(i for i, text in enumerate(source.splitlines()) if needle in text)
    col = source.splitlines()[line].index(needle) + len(needle) - 2
    info = hover(analyze(source, str(path)), line, col)
    assert info is not None
    return info.markdown


def _lines(source: str, *needles: str) -> list[int]:
    return [i + 1 for i, text in enumerate(source.splitlines()) if any(n in text for n in needles)]


def test_a_barrier_names_its_copy_and_its_wait() -> None:
    path = RACES / "fixed" / "aug_assign_before_wait.py"
    source = path.read_text()
    text = _hover_on(source, path, "barrier_wait(bar)")
    (copy_line,) = _lines(source, "copy_gmem_to_smem(x_ref, smem, bar)")
    (wait_line,) = _lines(source, "barrier_wait(bar)")
    assert f"arrives: `copy_gmem_to_smem` at line {copy_line}" in text
    assert f"waits: `barrier_wait` at line {wait_line}" in text


def test_each_barrier_shows_only_its_own_uses() -> None:
    """Two barriers, each with its own copy; the consumer waits on both, in the wrong order."""
    path = RACES / "racy" / "consumer_waits_other_barrier.py"
    source = path.read_text()
    text = _hover_on(source, path, "barrier_wait(bar_a)")
    (copy_a,) = _lines(source, "copy_gmem_to_smem(x_ref, a, bar_a)")
    (copy_b,) = _lines(source, "copy_gmem_to_smem(x_ref, b, bar_b)")
    (wait_a,) = _lines(source, "barrier_wait(bar_a)")
    assert f"at line {copy_a}" in text and f"waits: `barrier_wait` at line {wait_a}" in text
    assert f"line {copy_b}" not in text


def test_a_kernel_not_analysed_for_races_shows_no_uses() -> None:
    """A ref given to a call the interpreter does not follow leaves a hole in the record: no
    partial list of arrivals and waits."""
    path = RACES / "fixed" / "aug_assign_before_wait.py"
    source = path.read_text().replace("  plgpu.barrier_wait(bar)\n",
                                      "  plgpu.barrier_wait(bar)\n  unknown_helper(smem)\n")
    text = _hover_on(source, path, "barrier_wait(bar)")
    assert "arrives:" not in text and "waits:" not in text

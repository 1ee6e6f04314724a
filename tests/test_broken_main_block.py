"""A `__main__` block broken while typing (`main(` half typed) leaves the file analysed as it is
with the block whole: its driver runs in the block's context, so the tuning loop is a sweep and
each finding names the configuration it is proven in, as before the keystroke (and the kernels
are not analysed a second time with nothing known, which made such keystrokes the slowest)."""

from __future__ import annotations

import pytest
from test_sweep_modes import PLAIN, source

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics


def _findings(src: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in diagnostics(analyze(src, "k.py")) if d.code != "WG900"]


def test_half_typed_main_call_keeps_the_contexts_of_the_whole_block() -> None:
    whole = source(PLAIN)
    found = _findings(whole)
    assert found and all("with stages=4, from main() at line 20" in m for _, m in found)
    for broken in (whole.replace("  main()\n", "  main(\n"),       # the call half typed
                   whole.replace("  main()\n", "     main()\n"),   # ... or indented too deep
                   whole.replace("  main()\n", "  x = 1\n    main()\n    y = 2\n"),
                   whole.replace('if __name__ == "__main__":', 'if __name__ == "__main__"')):
        assert _findings(broken) == found, broken


def test_half_typed_def_line_of_main_keeps_its_sweep() -> None:
    """`def main():` half typed: its body, kept as a function of no name, is still the driver the
    block runs (the `def` line says so), so the kernel is analysed in the sweep's contexts."""
    whole = source(PLAIN)
    found = _findings(whole)
    for typed in ("def main(", "def main():[", "def main() -> No"):
        broken = whole.replace("def main():\n", typed + "\n")
        got = _findings(broken)
        assert got and all("with stages=4" in m for _, m in got), (typed, got)
        assert [c for c, _ in got] == [c for c, _ in found]


def test_a_file_that_parses_is_not_given_a_main_block() -> None:
    """Only a broken file stands in for its block: a `main()` nothing calls, in a file that
    parses, is analysed with nothing known, as before (its findings carry no context)."""
    whole = source(PLAIN)
    no_block = whole[:whole.index('if __name__ == "__main__":')]
    found = _findings(no_block)
    assert found and not any("from main()" in m for _, m in found)


def test_loop_of_main_whose_header_breaks_still_sweeps_the_kernel() -> None:
    """The outer loop of `main()` in the shipped Hopper matmul with its colon gone: its body, kept
    as a function of no name inside `main`, is the driver's code and runs as the block would
    run it (uncertain: it may have sat in a `try`), so a planted transpose is reported in the
    configurations the sweep reaches, not only by an analysis of the kernel with nothing known."""
    from shipped_harness import kernel_dir

    path = kernel_dir() / "hopper_matmul_mgpu.py"
    if not path.is_file():
        pytest.skip("the Hopper matmul kernel is not in the installed jax")
    wgmma = "plgpu.wgmma(acc_ref, a_smem.at[wg_m_slice], b_smem.at[:, wg_n_slice])"
    source = path.read_text().replace(wgmma, wgmma + "; acc_ref[...] = acc_ref[...].T", 1)
    loop = "  for M, N, K in problem_it:\n"
    assert wgmma in source and loop in source
    broken = source.replace(loop, loop.replace(":", ""), 1)
    found = [(d.code, d.message) for d in diagnostics(analyze(broken, str(path))) if d.code == "WG002"]
    # concrete sizes: the sweep's configurations, not `config.tile_m` of a run with nothing known
    assert found and all("config." not in m and "on some paths" in m for _, m in found), found

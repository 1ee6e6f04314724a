"""Hover coverage on the kernels shipped in the installed jax.

For each `jax/experimental/pallas/ops/gpu/*_mgpu.py`, prints the share of ref and array names
inside kernel bodies whose hover shows a known shape and dtype (symbolic sizes allowed, `?` not).
What counts as a kernel body and as a ref/array name is defined in `wgmma_lsp/ide/coverage.py`:
kernel bodies are found from the syntax; which names hold arrays/refs is observed from real JAX
tracing the file's entry points on the CPU (tests/shipped_harness.py). The file is analysed as a
user opens it (no harness lines, so sizes are symbolic where they come from parameters).
Then the same for the installed tokamax's Mosaic GPU kernel files (tests/tokamax_harness.py;
tokamax 0.0.17 needs Python >= 3.12: `.venv312/bin/python benchmarks/bench_hover_coverage.py`).

    .venv/bin/python benchmarks/bench_hover_coverage.py [-v] [FILE_PREFIX]

`-v` lists every name that is not covered with the entry point (`-v --opened`: as opened), with
what its hover shows. Target: 90% per file.
"""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from shipped_harness import ENTRIES, runtime_arrays, shipped_kernel_files, with_harness  # noqa: E402

from wgmma_lsp.analysis import analyze  # noqa: E402
from wgmma_lsp.ide.coverage import Coverage, hover_coverage  # noqa: E402

TARGET = 0.90


def measure(path: Path, tmp: Path) -> tuple[Coverage, Coverage] | None:
    """Coverage of one shipped file as opened (no entry point: symbolic sizes) and with the
    harness's concrete entry point; None when it has no entry point JAX can trace on a CPU."""
    if path.name not in ENTRIES:
        return None
    harnessed = tmp / path.name
    harnessed.write_text(with_harness(path.read_text(), path.name))
    runtime = runtime_arrays(harnessed)
    source = path.read_text()
    tree = ast.parse(source)
    as_opened = hover_coverage(analyze(source, str(path)), tree, runtime.arrays, runtime.lines,
                                runtime.params)
    with_entry = hover_coverage(analyze(harnessed.read_text(), str(harnessed)), tree, runtime.arrays,
                                runtime.lines)
    return as_opened, with_entry


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'file':36} {'names':>6} {'as opened':>10} {'with entry':>11}")
        for path in shipped_kernel_files():
            if prefixes and not any(path.name.startswith(p) for p in prefixes):
                continue
            both = measure(path, Path(tmp))
            if both is None:
                print(f"{path.name:36} {'—':>6} {'n/a':>10} {'n/a':>11}  (no CPU entry point in the harness)")
                continue
            opened, cov = both
            flag = "" if min(opened.share, cov.share) >= TARGET else "  below target"
            print(f"{path.name:36} {cov.total:6d} {opened.share:10.1%} {cov.share:11.1%}{flag}")
            if verbose:
                for n in (opened if "--opened" in argv else cov).names:
                    if not n.covered:
                        print(f"    {n.line + 1}:{n.col + 1} {n.function}.{n.name}: "
                              f"{' | '.join(n.shown) or 'nothing'}   (JAX: {n.jax_aval[:60]})")
        tokamax(Path(tmp), prefixes, verbose, "--opened" in argv)
    return 0


def tokamax(tmp: Path, prefixes: list[str], verbose: bool, opened: bool) -> None:
    """The same for tokamax's Mosaic GPU kernel files (tests/tokamax_harness.py: its kernel
    functions called with concrete configs, JAX tracing them on the CPU; every
    `ops/*/pallas_mosaic_gpu*.py` is listed, those without a harness entry as n/a)."""
    from tokamax_harness import ENTRIES as TOKAMAX_ENTRIES
    from tokamax_harness import hover_coverage_of, kernel_files, ops_dir, skip_reason

    reason = skip_reason()
    if reason:
        print(f"\ntokamax: skipped ({reason})")
        return
    print(f"\n{'tokamax (ops/)':52} {'names':>6} {'as opened':>10} {'with entry':>11}")
    for path in kernel_files():
        rel = path.relative_to(ops_dir()).as_posix()
        if prefixes and not any(path.name.startswith(p) or rel.startswith(p) for p in prefixes):
            continue
        if rel not in TOKAMAX_ENTRIES:
            if not path.name.endswith("_test.py"):
                print(f"{rel:52} {'—':>6} {'n/a':>10} {'n/a':>11}  (no CPU entry point in the harness)")
            continue
        as_opened, cov = hover_coverage_of(rel, tmp)
        flag = "" if min(as_opened.share, cov.share) >= TARGET else "  below target"
        print(f"{rel:52} {cov.total:6d} {as_opened.share:10.1%} {cov.share:11.1%}{flag}")
        if verbose:
            for n in (as_opened if opened else cov).names:
                if not n.covered:
                    print(f"    {n.line + 1}:{n.col + 1} {n.function}.{n.name}: "
                          f"{' | '.join(n.shown) or 'nothing'}   (JAX: {n.jax_aval[:60]})")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

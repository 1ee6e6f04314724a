"""Hover coverage on the kernels shipped in jax holds its measured floor.

The share of ref/array names inside kernel bodies whose hover shows a known shape and dtype
(definition: `wgmma_lsp/ide/coverage.py`; which names hold arrays/refs is observed from real JAX
tracing the harness entry points, `tests/shipped_harness.py`). Floors are the numbers measured
with `benchmarks/bench_hover_coverage.py`, rounded down; raise them when coverage improves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shipped_harness import ENTRIES, runtime_arrays, shipped_kernel_files, with_harness
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.coverage import hover_coverage, kernel_body_functions
from wgmma_lsp.interpret.jax_version import matches

# (as opened: no entry point, sizes symbolic; with the harness entry point: concrete)
FLOORS: dict[str, tuple[float, float]] = {
    "all_gather_mgpu.py": (0.99, 0.99),
    "collective_matmul_mgpu.py": (0.99, 0.99),
    "reduce_scatter_mgpu.py": (0.99, 0.99),
    "attention_mgpu.py": (0.96, 0.99),
    "blackwell_matmul_mgpu.py": (0.99, 0.99),
    "blackwell_ragged_dot_mgpu.py": (0.99, 0.99),
    "hopper_matmul_mgpu.py": (0.99, 0.99),
    "hopper_mixed_type_matmul_mgpu.py": (0.99, 0.99),
    "ragged_dot_mgpu.py": (0.90, 0.99),
    "transposed_ragged_dot_mgpu.py": (0.98, 0.97),
}
if matches(">=0.12"):  # measured on JAX 0.12 too (the blackwell kernels' `plgpu.warp_map` is
    # modelled, collective_matmul's meshes and semaphores too: the same numbers as on 0.10)
    FLOORS |= {"collective_matmul_mgpu.py": (0.99, 0.99)}

FILES = [p for p in shipped_kernel_files() if p.name in ENTRIES]


def test_every_harnessed_file_has_a_floor() -> None:
    assert {p.name for p in FILES} == set(FLOORS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_hover_coverage_floor(path: Path, tmp_path: Path) -> None:
    harnessed = tmp_path / path.name
    harnessed.write_text(with_harness(path.read_text(), path.name))
    runtime = runtime_arrays(harnessed)
    assert runtime.arrays, "JAX traced nothing: the harness entry points are broken"
    source = path.read_text()
    tree = ast.parse(source)
    for analysis, floor in ((analyze(source, str(path)), FLOORS[path.name][0]),
                            (analyze(harnessed.read_text(), str(harnessed)), FLOORS[path.name][1])):
        cov = hover_coverage(analysis, tree, runtime.arrays, runtime.lines, runtime.params)
        assert cov.total >= 20  # the kernel bodies were found and JAX saw arrays in them
        missing = [f"{n.line + 1}:{n.name} shows {n.shown or 'nothing'}"
                   for n in cov.names if not n.covered]
        assert cov.share >= floor, f"{cov.covered}/{cov.total}: " + "; ".join(missing[:20])


def test_kernel_bodies_are_found_from_the_syntax() -> None:
    source = '''
import functools
import jax.experimental.pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

def helper(r):
    return r

def not_a_kernel(x):
    return x

def kernel(a_ref, o_ref, config):
    @functools.partial(pl.run_scoped, acc=plgpu.ACC((64, 64)))
    def scope(acc):
        helper(acc)
    def nested():
        pass

def main(x):
    return plgpu.kernel(functools.partial(kernel, config=1), out_shape=x)(x)
'''
    names = {getattr(f, "name", "<lambda>") for f in kernel_body_functions(ast.parse(source))}
    assert names == {"kernel", "scope", "helper", "nested"}

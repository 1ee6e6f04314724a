"""Scratch specs as the Python objects they are (models/scratch_specs.py).

A kernel library sizes its shared memory from the specs it allocates (tokamax's
`estimate_smem_bytes(scratch_types)` walks them with `isinstance` and `getattr(x, "memory_space",
None)`). Each program runs in CPython (with JAX) and through the interpreter; what the
interpreter claims must be what CPython holds.
"""

from __future__ import annotations

import pytest
from pytree_agree import agree, claims
from test_python_calls import HEADER

SPECS = HEADER + """
import math
smem = plgpu.SMEM((64, 128), jnp.bfloat16)
acc = plgpu.ACC((64, 128), jnp.float32)
bar = plgpu.Barrier(num_arrivals=2, num_barriers=3)
union = plgpu.RefUnion(plgpu.SMEM((64, 64), jnp.float16), plgpu.SMEM((32,), jnp.float32))
"""


def test_attributes_of_memory_refs_accumulators_barriers_and_unions() -> None:
    agree(SPECS + """
shape, dtype, in_smem = smem.shape, smem.dtype.name, smem.memory_space is plgpu.SMEM
acc_shape, acc_bytes = acc.shape, jnp.dtype(acc.dtype).itemsize
arrivals, barriers = bar.num_arrivals, bar.num_barriers
union_shape, union_dtype, union_smem = union.shape, union.dtype.name, union.memory_space == plgpu.SMEM
""", "shape", "dtype", "in_smem", "acc_shape", "acc_bytes", "arrivals", "barriers",
          "union_shape", "union_dtype", "union_smem")


def test_isinstance_and_getattr_with_a_default() -> None:
    agree(SPECS + """
kinds = [(isinstance(x, plgpu.RefUnion), isinstance(x, plgpu.Barrier), isinstance(x, plgpu.ClusterBarrier))
         for x in (smem, acc, bar, union, 3, None, (1, 2), {"a": 1})]
spaces = [getattr(x, "memory_space", None) is None for x in (smem, acc, bar, union)]
""", "kinds", "spaces")


def test_a_library_estimate_of_smem_bytes() -> None:
    """tokamax's way: every SMEM buffer's bytes, barriers at 8 bytes each."""
    agree(SPECS + """
def estimate(scratch):
    total = 0
    for x in jax.tree.leaves(scratch):
        if isinstance(x, plgpu.Barrier):
            total += 8 * math.prod(x.num_barriers)
        elif getattr(x, "memory_space", None) == plgpu.SMEM:
            total += math.prod(x.shape) * jnp.dtype(x.dtype).itemsize
    return total

total = estimate({"a": smem, "b": [bar, union], "c": acc})
""", "total")


@pytest.mark.parametrize("expr", ["plgpu.Barrier().num_barriers"])
def test_a_default_that_changed_between_versions_is_jaxs(expr: str) -> None:
    """`Barrier()`'s `num_barriers`: (1,) in JAX 0.10, () in 0.12 (a single barrier, a ref of
    empty shape). The interpreter claims the installed JAX's or nothing."""
    source = HEADER + f"n = {expr}\n"
    from test_python_calls import run_cpython

    assert claims(source, "n") in (None, run_cpython(source)["n"])


def test_try_cluster_cancel_result_is_an_int8_smem_buffer() -> None:
    agree(HEADER + """
one = plgpu.TryClusterCancelResult()
two = plgpu.TryClusterCancelResult(2)
shapes = one.shape, two.shape, two.dtype.name, two.memory_space is plgpu.SMEM
""", "shapes")

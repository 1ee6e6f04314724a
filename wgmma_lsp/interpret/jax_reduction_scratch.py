"""The shared memory JAX reserves for reductions in a Mosaic GPU kernel, read from its source.

`jax/_src/pallas/mosaic_gpu/lowering.py` registers one resource estimator for the reduction
primitives (`@_register_resource_estimator(lax.reduce_sum_p)` … above
`_reduce_resource_estimator`), which asks for `ctx.reduction_scratch_bytes` of SMEM — the
kernel's `plgpu.CompilerParams(reduction_scratch_bytes=…)`, by default `128 * 4 * 4` (the
dataclass field in `jax/_src/pallas/mosaic_gpu/core.py`). Which primitives it covers differs by
version (0.10.2: reduce_sum, reduce_max, reduce_min; 0.12 adds reduce_prod), so both are read
from the installed files (never imported) and kept with the other facts (`jax_facts.py`).
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import jax_source_read as jax_source

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

_ESTIMATOR = "_reduce_resource_estimator"

#: The primitive each `jnp` reduction binds (`jax.make_jaxpr` of each, on 0.10.2 and 0.12.0.1):
#: `jnp.var`/`jnp.std` bind a `jit` whose body reduces with reduce_sum (the estimator of `jit`
#: estimates its body); any/all bind reduce_or/reduce_and, argmax/argmin their own primitives.
JNP_REDUCTION_PRIMITIVE = {
    "sum": "reduce_sum", "mean": "reduce_sum", "var": "reduce_sum", "std": "reduce_sum",
    "max": "reduce_max", "amax": "reduce_max", "min": "reduce_min", "amin": "reduce_min",
    "prod": "reduce_prod", "any": "reduce_or", "all": "reduce_and",
    "argmax": "argmax", "argmin": "argmin",
}


def read() -> dict[str, Any] | None:
    """{"primitives": [...], "default_bytes": int | None} from the installed source; None when
    the estimator is not found."""
    tree = jax_source._tree("jax._src.pallas.mosaic_gpu.lowering")
    if tree is None:
        return None
    prims: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == _ESTIMATOR:
            prims = []
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and d.args and isinstance(d.args[0], ast.Attribute):
                    name = d.args[0].attr
                    if name.endswith("_p"):
                        prims.append(name[:-2])
    if not prims:
        return None
    return {"primitives": sorted(prims), "default_bytes": _read_default()}


def _read_default() -> int | None:
    """`reduction_scratch_bytes: int = 128 * 4 * 4` in `CompilerParams` (core.py)."""
    tree = jax_source._tree("jax._src.pallas.mosaic_gpu.core")
    if tree is None:
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and node.target.id == "reduction_scratch_bytes" and node.value is not None):
            return _int_expr(node.value)
    return None


def _int_expr(node: ast.expr) -> int | None:
    """An integer literal or a product/sum of them (`128 * 4 * 4`)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
        a, b = _int_expr(node.left), _int_expr(node.right)
        if a is None or b is None:
            return None
        return a * b if isinstance(node.op, ast.Mult) else a + b
    return None


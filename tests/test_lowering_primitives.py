"""WG084: the Mosaic GPU lowering's rule table, read from the installed JAX's source
(interpret/jax_lowering_rules.py), is the table JAX builds when imported; and each jnp/lax
operation the analyzer maps to a primitive binds that primitive in real JAX's jaxpr.

Together: the analyzer reports "Unimplemented primitive" exactly where the operation binds a
primitive the kernel's semantics has no rule for (the fixtures
tests/fixtures/lowering_kernel/unimplemented_primitive_*.py lower such kernels with real JAX).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import jax_lowering_rules, jax_source
from wgmma_lsp.interpret.jax_source import jax_root

pytestmark = pytest.mark.skipif(jax_root() is None, reason="needs an installed jax")


def _runtime_table():
    import jax.experimental.pallas.mosaic_gpu  # noqa: F401 - registers every lowering rule
    from jax._src.pallas.mosaic_gpu import core as gpu_core, lowering

    keys = {"lane/warpgroup": gpu_core.LANExWG_SEMANTICS, "lane/warp": gpu_core.LANExWARP_SEMANTICS,
            "warpgroup/warpgroup": gpu_core.WGxWG_SEMANTICS, "warpgroup/warp": gpu_core.WGxWARP_SEMANTICS}
    return {k: lowering.mosaic_lowering_rules[key] for k, key in keys.items()}


def _object(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_table_read_from_source_is_the_one_jax_builds() -> None:
    static = jax_lowering_rules.read(Path(jax_root()))
    assert static is not None
    runtime = _runtime_table()
    assert set(static) == set(runtime)
    for key, rules in runtime.items():
        assert jax_lowering_rules.UNKNOWN not in static[key], key
        read = {id(_object(d)): d for d in static[key]}
        assert {id(p) for p in rules} == set(read), (key, sorted(p.name for p in rules if id(p) not in read),
                                                    sorted(d for i, d in read.items() if i not in {id(p) for p in rules}))


def test_the_analysis_follows_the_table_of_the_installed_jax() -> None:
    runtime = _runtime_table()
    for prim in ("dot_general", "transpose", "stack", "concatenate", "argmax", "argmin", "cumsum", "sort", "rev",
                 "add", "exp"):
        for sem in ("lane", "warpgroup"):
            have = any(p.name == prim for p in runtime[f"{sem}/warpgroup"])
            assert jax_source.lowering_rule_registered(f"{prim}_p", sem) is have, (prim, sem)


#: (expression on x, y: f32[128,128] and v: f32[128] loaded in the kernel, output shape)
CASES = [
    ("jnp.dot(x, y)", (128, 128)), ("x @ y", (128, 128)), ("jnp.matmul(x, y)", (128, 128)),
    ("lax.dot(x, y)", (128, 128)), ("jnp.dot(v, y)", (128,)), ("v @ v + x", (128, 128)),
    ("jnp.dot(x, y, preferred_element_type=jnp.float32)", (128, 128)),
    ("jnp.transpose(x)", (128, 128)), ("jnp.transpose(x, (1, 0))", (128, 128)),
    ("jnp.transpose(x, (0, 1))", (128, 128)), ("jnp.transpose(x, (-1, 0))", (128, 128)),
    ("x.transpose()", (128, 128)), ("x.transpose(1, 0)", (128, 128)), ("x.transpose((1, 0))", (128, 128)),
    ("x.transpose(0, 1)", (128, 128)), ("jnp.swapaxes(x, 0, 1)", (128, 128)), ("jnp.swapaxes(x, 1, -1)", (128, 128)),
    ("lax.transpose(x, (1, 0))", (128, 128)), ("lax.transpose(x, (0, 1))", (128, 128)),
    ("jnp.concatenate([x, y])", (256, 128)), ("jnp.concatenate([x])", (128, 128)),
    ("jnp.concatenate((x, y), axis=1)", (128, 256)), ("lax.concatenate([x, y], 0)", (256, 128)),
    ("jnp.stack([x, y])", (2, 128, 128)), ("jnp.stack([x])", (1, 128, 128)), ("jnp.stack((v, v), axis=1)", (128, 2)),
    ("jnp.transpose(v)", (128,)), ("x + y", (128, 128)), ("x.T", (128, 128)), ("v.T + x", (128, 128)),
    ("(x + 1).T @ y", (128, 128)), ("jnp.argmax(x, axis=0).astype(jnp.float32)", (128,)),
    ("x.argmin(axis=1).astype(jnp.float32)", (128,)), ("jnp.argmin(x, 1).astype(jnp.float32)", (128,)),
    ("lax.cumsum(x, axis=0)", (128, 128)), ("lax.cumsum(x, 1, reverse=True)", (128, 128)),
    ("lax.sort(x, dimension=0)", (128, 128)), ("lax.sort(v)", (128,)), ("lax.rev(x, (0,))", (128, 128)),
    ("lax.rev(x, (0, 1))", (128, 128)), ("jnp.cumsum(x, axis=0)", (128, 128)), ("jnp.cumsum(v, 0)", (128,)),
    ("jnp.sort(x, axis=0)", (128, 128)), ("jnp.sort(x)", (128, 128)), ("jnp.flip(x, axis=0)", (128, 128)),
    ("jnp.flip(x, (0, 1))", (128, 128)),
]
WATCHED = {"dot_general", "transpose", "stack", "concatenate", "argmax", "argmin", "cumsum", "sort", "rev"}
#: Operations whose primitive is bound inside a `jit` of jnp's own: JAX's lowering error names no
#: line of the kernel's file (fixtures lowering_kernel/kernel_level_unimplemented_primitive_jnp_*.py),
#: and wgmma-lsp blames the launch (line 13 of _KERNEL) instead of the line that calls them (9).
IN_JNP_JIT = ("jnp.cumsum(", "jnp.sort(", "jnp.flip(")


def _bound(expr: str) -> list[str]:
    """The watched primitives real JAX binds for `expr` (nested jaxprs included), in the order
    it binds them."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(x, y, v):
        return eval(expr, {"jnp": jnp, "lax": lax, "x": x, "y": y, "v": v})

    seen: list[str] = []

    def walk(jaxpr) -> None:
        for eqn in jaxpr.eqns:
            seen.append(eqn.primitive.name)
            for sub in jax.core.jaxprs_in_params(eqn.params) if hasattr(jax.core, "jaxprs_in_params") else ():
                walk(sub)
            for p in eqn.params.values():
                inner = getattr(p, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    walk(inner)

    s = jax.ShapeDtypeStruct
    walk(jax.make_jaxpr(f)(s((128, 128), jnp.float32), s((128, 128), jnp.float32), s((128,), jnp.float32)).jaxpr)
    return list(dict.fromkeys(p for p in seen if p in WATCHED))


_KERNEL = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import mosaic_gpu as plgpu

def kernel(x_ref, y_ref, v_ref, o_ref):
  x, y, v = x_ref[...], y_ref[...], v_ref[...]
  o_ref[...] = {expr}

def run(x, y, v):
  params = plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.{sem})
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct({out}, jnp.float32), compiler_params=params)(x, y, v)

# wgmma-lsp: trace run(f32[128,128], f32[128,128], f32[128])
'''


@pytest.mark.parametrize("sem", ["Lane", "Warpgroup"])
@pytest.mark.parametrize("expr,out", CASES, ids=[c[0] for c in CASES])
def test_each_operation_is_reported_where_it_binds_a_primitive_without_a_rule(expr: str, out, sem: str) -> None:
    runtime = _runtime_table()[f"{sem.lower()}/warpgroup"]
    # JAX's lowering stops at the first primitive it has no rule for (`(x + 1).T @ y`: the
    # transpose, not the dot_general after it; interpret/followon.py)
    first = [name for name in _bound(expr) if not any(p.name == name for p in runtime)][:1]
    found = analyze(_KERNEL.format(expr=expr, sem=sem, out=out), "/tmp/wg084_case.py").findings
    reported = {f.message.split(": ", 1)[1].split(" for lowering", 1)[0] for f in found if f.rule.code == "WG084"}
    assert reported == set(first), [f.message for f in found]
    blamed = 13 if expr.startswith(IN_JNP_JIT) else 9
    assert all(f.blame_line + 1 == blamed for f in found if f.rule.code == "WG084")

"""WG113 unbound-axis-name: where the analyzer knows which axis names are bound, and where it
says nothing because it does not. The fixtures `errors/unbound_axis_name.py` and
`clean/kernel_axis_names.py` are checked against JAX itself (tests/test_fixtures_against_jax.py);
these cases are about the analyzer's own knowledge: the same kernel launched where its callers
are known (reported) and where they are not (any caller may bind the name: silent)."""

from __future__ import annotations

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import jax_templates as T
from wgmma_lsp.interpret.jax_source import jax_root
from wgmma_lsp.rules import unbound_axis_name

HEAD = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

OUT = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_gmem, o_gmem):
  o_gmem[...] = x_gmem[...] + jax.lax.axis_index("data")


def launch(x):
  return plgpu.kernel(body, out_type=OUT, grid=(2,), grid_names=("x",))(x)
'''


def _wg113(source: str) -> list[tuple[int, str]]:
    return [(f.blame_line + 1, f.message) for f in analyze(source, "/tmp/axis_case.py").findings
            if f.rule.code == "WG113"]


MESSAGE = ("Found an unbound axis name: data. To fix this, please call axis_index under "
           "`jax.shard_map`.")


def test_a_launch_with_unknown_callers_is_not_judged() -> None:
    # `launch` is only analysed with nothing known about its callers: one may run it under a
    # shard_map over "data".
    assert _wg113(HEAD) == []


def test_the_same_launch_from_an_entry_point_is_reported() -> None:
    assert _wg113(HEAD + "\n# wgmma-lsp: trace launch(f32[128])\n") == [(10, MESSAGE)]


def test_a_helper_shared_by_a_known_and_an_unknown_caller() -> None:
    # `sharded` binds "data" around the launch, `plain` does not: the memoised call of `launch`
    # is not replayed from one context into the other.
    source = HEAD + '''

def sharded(x):
  mesh = jax.make_mesh((1,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
  return jax.shard_map(launch, mesh=mesh, in_specs=jax.P("data"), out_specs=jax.P("data"))(x)


def plain(x):
  return launch(x)

# wgmma-lsp: trace sharded(f32[128])
# wgmma-lsp: trace plain(f32[128])
'''
    assert _wg113(source) == [(10, MESSAGE)]
    assert _wg113(source.replace("# wgmma-lsp: trace plain(f32[128])\n", "")) == []


def test_vmap_axis_name_binds_it() -> None:
    source = HEAD + '''

def batched(xs):
  return jax.vmap(launch, axis_name="data")(xs)


def unnamed(xs):
  return jax.vmap(launch)(xs)

# wgmma-lsp: trace batched(f32[4,128])
'''
    assert _wg113(source) == []
    assert _wg113(source.replace("trace batched", "trace unnamed")) == [(10, MESSAGE)]


@pytest.mark.parametrize("launcher", [
    # a pallas_call's grid_spec is not followed here (the names its grid may bind)
    "pl.pallas_call(body, out_shape=OUT, grid_spec=pl.GridSpec(grid=(1,), "
    "in_specs=[pl.BlockSpec(memory_space=plgpu.GMEM)], out_specs=pl.BlockSpec(memory_space=plgpu.GMEM)))(x)",
    # a pallas_call grid whose names are not constants
    "pl.pallas_call(body, out_shape=OUT, grid=((os.environ['AXIS'], 1),), "
    "in_specs=[pl.BlockSpec(memory_space=plgpu.GMEM)], out_specs=pl.BlockSpec(memory_space=plgpu.GMEM))(x)",
    # kernel names that are not constants
    "plgpu.kernel(body, out_type=OUT, grid=(2,), grid_names=(os.environ['AXIS'],))(x)",
    # names JAX's Mesh refuses (one name for two grid axes): the body is never traced
    "plgpu.kernel(body, out_type=OUT, grid=(2, 2), grid_names=(\"x\",))(x)",
])
def test_unknown_or_refused_kernel_names_are_not_judged(launcher: str) -> None:
    source = HEAD + f'''

def other(x):
  import os
  return {launcher}

# wgmma-lsp: trace other(f32[128])
'''
    assert _wg113(source) == []


@pytest.mark.skipif(jax_root() is None, reason="needs an installed jax")
def test_axis_size_words_are_the_installed_jax_s() -> None:
    assert T.find(unbound_axis_name.SIZE_TEMPLATE)

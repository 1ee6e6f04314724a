"""Every import spelling of the Mosaic GPU API resolves to the same models."""

from __future__ import annotations

import pytest

from wgmma_lsp.analysis import analyze

BODY = '''
def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    {wgmma}(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].astype({jnp}.bfloat16)
  {pl}.run_scoped(body, {acc}((64, 128)))
'''

SPELLINGS = {
    "public": ("import jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
               "from jax.experimental.pallas import mosaic_gpu as plgpu\n",
               dict(wgmma="plgpu.wgmma", jnp="jnp", pl="pl", acc="plgpu.ACC")),
    "dotted-import": ("import jax\nimport jax.experimental.pallas\nimport jax.experimental.pallas.mosaic_gpu as plgpu\n",
                      dict(wgmma="plgpu.wgmma", jnp="jax.numpy", pl="jax.experimental.pallas", acc="plgpu.ACC")),
    "aliases": ("from jax import numpy as np_\nfrom jax.experimental import pallas\n"
                "from jax.experimental.pallas.mosaic_gpu import ACC as Accumulator, wgmma as mma\n",
                dict(wgmma="mma", jnp="np_", pl="pallas", acc="Accumulator")),
    "private": ("import jax.numpy as jnp\nfrom jax._src.pallas import primitives as pallas_primitives\n"
                "from jax._src.pallas.mosaic_gpu import core as gpu_core\n"
                "from jax._src.pallas.mosaic_gpu import primitives as gpu_primitives\n",
                dict(wgmma="gpu_primitives.wgmma", jnp="jnp", pl="pallas_primitives",
                     acc="gpu_core.WGMMAAccumulatorRef")),
    "star": ("from jax.numpy import *\nimport jax.numpy as jnp\nfrom jax.experimental.pallas import *\n"
             "from jax.experimental.pallas.mosaic_gpu import *\nimport jax.experimental.pallas as pl\n",
             dict(wgmma="wgmma", jnp="jnp", pl="pl", acc="ACC")),
}


@pytest.mark.parametrize("name", SPELLINGS)
def test_import_spelling(name: str) -> None:
    header, names = SPELLINGS[name]
    source = header + BODY.format(**names)
    findings = analyze(source).findings
    assert [f.message for f in findings] == ["Accumulator dtype float32 does not match value dtype bfloat16"]


def test_unknown_modules_stay_unknown() -> None:
    source = "from mylib import wgmma, ACC\n" + BODY.format(wgmma="wgmma", jnp="jnp", pl="pl", acc="ACC")
    assert analyze(source).findings == []

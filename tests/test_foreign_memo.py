"""Calls of another module's functions are analysed once per distinct arguments
(interpret/foreign_memo.py): a replay stands for a run only where nothing could tell them apart,
so what the analysis reports is the same with the memo and without it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import foreign_memo, interp_calls
from wgmma_lsp.program import Program

OPS = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def _kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


def matmul(a, b):
  return pl.pallas_call(
      _kernel,
      out_shape=jax.ShapeDtypeStruct((64, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=plgpu.SMEM)] * 2,
      out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
  )(a, b)


def tile(n):
  return min(n, 128) if n % 64 == 0 else 64
'''

MAIN = '''\
import jax.numpy as jnp
from mypkg.ops import matmul, tile


def main():
  a = jnp.zeros((64, 64), jnp.bfloat16)
  b = jnp.zeros((64, 128), jnp.bfloat16)
  t = tile(256) + tile(256) + tile(256)
  matmul(a, b)
  matmul(a, b)
  matmul(a, b)


if __name__ == "__main__":
  main()
'''


def _report(tmp_path: Path, enabled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list, int]:
    monkeypatch.setattr(foreign_memo, "ENABLED", enabled)
    replays = []
    original = interp_calls.CallsMixin._replay

    def counting(self, hit, func, call):
        if isinstance(hit, foreign_memo.ForeignEntry):
            replays.append(func.name)
        return original(self, hit, func, call)

    monkeypatch.setattr(interp_calls.CallsMixin, "_replay", counting)
    path = tmp_path / "main.py"
    analysis = analyze(MAIN, str(path), program=Program((str(tmp_path),)))
    found = sorted((d.span.line + 1, d.code, d.message, tuple(r.span.line for r in d.related))
                   for d in diagnostics(analysis))
    return found, len(replays)


def test_the_same_findings_with_the_memo_and_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "ops.py").write_text(textwrap.dedent(OPS))
    without, none = _report(tmp_path, False, monkeypatch)
    with_memo, replays = _report(tmp_path, True, monkeypatch)
    assert none == 0
    assert with_memo == without
    # Each call of the op gets the error JAX raises inside it (a finding sits at the document's
    # call that led there: a run's findings are never replayed at another call site) ...
    assert [line for line, code, *_ in with_memo if code == "WG001"] == [9, 10, 11]
    # ... while a call that found nothing stands for the later equal calls (the first run
    # of a call is made twice: the second is the one its replays count the steps of).
    assert replays >= 1

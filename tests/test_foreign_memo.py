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


STACK_OPS = '''\
def leaf(n):
  return n * 2


def x(n):
  return leaf(n) + 1


def via(n):
  return x(n)


def deeper(n):
  return via(n)


def guard(n, again):
  if again:
    return x(n)  # `x` calls `leaf`: not followed while `leaf` runs (the recursion guard)
  return n


def leaf_again(n):
  return guard(n, True)
'''

STACK_MAIN = '''\
from mypkg.ops import deeper, leaf, via, x


def main():
  a = x(3)
  b = x(3)
  c = x(3)
  d = via(3)
  e = deeper(3)
  f = leaf(3)
  return a, b, c, d, e, f


if __name__ == "__main__":
  main()
'''


def _values(tmp_path: Path, main: str, enabled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, list]:
    """What every name of `main` held, with the foreign memo on or off, and the replays made
    (the function and the depth of the stack it was replayed on)."""
    monkeypatch.setattr(foreign_memo, "ENABLED", enabled)
    replays: list[tuple[str, int]] = []
    original = interp_calls.CallsMixin._replay

    def counting(self, hit, func, call):
        if isinstance(hit, foreign_memo.ForeignEntry):
            replays.append((func.name, len(self.stack)))
        return original(self, hit, func, call)

    monkeypatch.setattr(interp_calls.CallsMixin, "_replay", counting)
    analysis = analyze(main, str(tmp_path / "main.py"), program=Program((str(tmp_path),)))
    values = {(span.line, span.col): [v.describe() for v in rec.values]
              for span, rec in analysis.records.items() if rec.kind == "name"}
    return values, list(replays)  # (a later analysis' patch calls this one's counting too)


def _package(tmp_path: Path, ops: str) -> None:
    (tmp_path / "mypkg").mkdir(exist_ok=True)
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "ops.py").write_text(ops)


def test_a_run_stands_for_an_equal_call_on_another_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, STACK_OPS)
    without, none = _values(tmp_path, STACK_MAIN, False, monkeypatch)
    with_memo, replays = _values(tmp_path, STACK_MAIN, True, monkeypatch)
    assert none == [] and with_memo == without
    # `x(3)` run from `main` (twice: the second is the one replays count the steps of) stands
    # for `x(3)` called from `via` and `deeper`, deeper on the stack.
    assert ("x", 1) in replays and ("x", 2) in replays and ("x", 3) in replays


GUARD_OPS = '''\
def leaf(n, deep):
  if deep:
    return via(n)
  return n * 2


def x(n):
  return leaf(n, False) + 1  # not followed while `leaf` runs outside (the recursion guard)


def via(n):
  return x(n)
'''

GUARD_MAIN = '''\
from mypkg.ops import leaf, x


def main():
  a = x(4)
  b = x(4)
  c = x(4)
  d = leaf(4, True)
  return a, b, c, d


if __name__ == "__main__":
  main()
'''


def test_no_replay_where_the_recursion_guard_would_cut_the_run(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, GUARD_OPS)
    without, _ = _values(tmp_path, GUARD_MAIN, False, monkeypatch)
    with_memo, replays = _values(tmp_path, GUARD_MAIN, True, monkeypatch)
    assert with_memo == without
    # `x(4)` in `main` stands for the third (its second run is the one replays count) ...
    assert ("x", 1) in replays
    # ... not for `x(4)` under `leaf(4, True)`, where its call of `leaf` is cut: `d` is not 9.
    assert ("x", 3) not in replays
    assert without[(8, 18)] == ["unknown"] and without[(8, 9)] == ["9"]  # (`return a, b, c, d`)


def test_no_replay_where_the_depth_limit_would_cut_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, STACK_OPS)
    monkeypatch.setattr(interp_calls, "MAX_DEPTH", 4)  # main -> deeper -> via -> x: `leaf` is cut
    monkeypatch.setattr(foreign_memo, "MAX_DEPTH", 4)
    without, _ = _values(tmp_path, STACK_MAIN, False, monkeypatch)
    with_memo, replays = _values(tmp_path, STACK_MAIN, True, monkeypatch)
    assert with_memo == without
    assert ("x", 1) in replays and ("x", 3) not in replays

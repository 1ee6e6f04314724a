"""Nests of short loops in a function no context reached are unrolled up to a cap.

A function nothing calls is analysed with nothing known (`driver.run_unreached`). Its loops over
a few known items are unrolled, each iteration seeing its own item, while the innermost body
would run at most `driver.UNROLL_CAP` times; a loop past that runs as a loop of unknown trip
count (the body analysed with the items joined). Eight nested loops enumerating 1,440 autotuning
configs cost nine tenths of the analysis of tokamax's GLU kernel module, and proved nothing a
joined loop does not: the configs are not an argument of any context.

Everywhere else loops are unrolled as Python runs them: in a context (a `__main__` block, a
test) and in a kernel's body, whose Python loops JAX unrolls when it traces.
"""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import driver
from wgmma_lsp.interpret.values import Const

FIXTURES = Path(__file__).parent / "fixtures"

#: Five nested loops of two items: 32 runs of the innermost body, past the cap.
LOOPS = """\
  n = 0
  for a in (1, 2):
    for b in (1, 2):
      for c in (1, 2):
        for d in (1, 2):
          for e in (1, 2):
            n = n + a
  total = n
"""
NEST = "def count():\n" + LOOPS + "  return total\n"
TOTAL_LINE = NEST.splitlines().index("  total = n")


def _values(analysis, name: str, line: int) -> list:
    return [v for r in analysis.records.values() if r.name == name and r.span.line == line for v in r.values]


def test_the_nest_is_past_the_cap() -> None:
    assert 2 ** 5 > driver.UNROLL_CAP >= 2 ** 2  # (what the tests below rely on)


def test_a_nest_past_the_cap_in_an_unreached_function_runs_as_loops() -> None:
    values = _values(analyze(NEST, "nest.py"), "total", TOTAL_LINE)
    assert values  # analysed
    # joined, not enumerated; and never a wrong number (CPython: 48)
    assert all(not isinstance(v, Const) or v.value == 48 for v in values)
    assert Const(48) not in values


def test_the_same_nest_in_a_context_is_unrolled_in_full() -> None:
    source = NEST + '\n\nif __name__ == "__main__":\n  count()\n'
    namespace: dict = {}
    exec(compile(NEST, "nest.py", "exec"), namespace)  # noqa: S102 (CPython is the spec)
    assert namespace["count"]() == 48
    assert _values(analyze(source, "nest.py"), "total", TOTAL_LINE) == [Const(48)]


KERNEL_NEST = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
""" + LOOPS + """\
  o_ref[...] = x_ref[...] * total


def launch(x):
  return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(x)
"""


def test_a_kernel_body_launched_by_an_unreached_function_is_unrolled_in_full() -> None:
    line = KERNEL_NEST.splitlines().index("  total = n")
    assert _values(analyze(KERNEL_NEST, "kernel_nest.py"), "total", line) == [Const(48)]


def test_a_finding_in_every_iteration_past_the_cap_is_still_reported() -> None:
    fixture = (FIXTURES / "errors" / "dtype_store_bf16.py").read_text()
    source = fixture.split("# wgmma-lsp: trace")[0] + """

def sweep():
  for a in (1, 2):
    for b in (1, 2):
      for c in (1, 2):
        for d in (1, 2):
          for e in (1, 2):
            f(jnp.zeros((64, 64), jnp.bfloat16), jnp.zeros((64, 128), jnp.bfloat16))
"""
    blamed = next(i for i, text in enumerate(source.splitlines()) if "# E: WG001" in text)
    found = [(d.span.line, d.code) for d in diagnostics(analyze(source, "sweep.py"))]
    assert (blamed, "WG001") in found

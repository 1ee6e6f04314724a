"""Entry points found in the syntax tree, and the concrete contexts they give the analyzer."""

from __future__ import annotations

import ast
import textwrap

from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.discover import discover
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.values import ProductVal, TupleVal


def sites(src: str):
    return discover(ast.parse(textwrap.dedent(src)))


def test_main_block_and_tests_are_found_in_order() -> None:
    found = sites('''
        import pytest
        def test_plain():
            pass
        @pytest.mark.parametrize("m,n", [(64, 128), (128, 256)])
        @pytest.mark.parametrize("dtype", ["bfloat16", pytest.param("float16", id="f16")])
        def test_grid(m, n, dtype):
            pass
        def helper():
            pass
        if __name__ == "__main__":
            test_plain()
    ''')
    assert [(s.kind, s.name) for s in found] == [
        ("test", "test_plain()"), ("test", "test_grid()"), ("main-block", "the __main__ block")]
    grid = found[1]
    assert len(grid.cases) == 4 and grid.dropped == 0
    assert [c.label for c in grid.cases] == [
        (("m", "64"), ("n", "128"), ("dtype", "'bfloat16'")),
        (("m", "64"), ("n", "128"), ("dtype", "'float16'")),
        (("m", "128"), ("n", "256"), ("dtype", "'bfloat16'")),
        (("m", "128"), ("n", "256"), ("dtype", "'float16'")),
    ]


def test_absl_parameterized_cases() -> None:
    found = sites('''
        from absl.testing import parameterized
        class MatmulTest(parameterized.TestCase):
            @parameterized.parameters((64, 128), (128, 64))
            def test_positional(self, m, n):
                pass
            @parameterized.named_parameters(("small", 64), dict(testcase_name="big", m=256))
            def test_named(self, m):
                pass
            @parameterized.product(m=(64, 128), n=(8, 16, 32))
            def test_product(self, m, n):
                pass
            def helper(self):
                pass
    ''')
    assert [s.name for s in found] == ["MatmulTest.test_positional()", "MatmulTest.test_named()",
                                       "MatmulTest.test_product()"]
    assert all(s.method for s in found)
    assert [c.label for c in found[0].cases] == [(("m", "64"), ("n", "128")), (("m", "128"), ("n", "64"))]
    assert [c.label for c in found[1].cases] == [(("m", "64"),), (("m", "256"),)]
    assert len(found[2].cases) == 6


def test_cases_beyond_the_budget_are_counted() -> None:
    found = sites('''
        import pytest
        @pytest.mark.parametrize("a", SIZES)
        def test_not_literal(a):
            pass
        @pytest.mark.parametrize("a", [1, 2, 3, 4, 5])
        @pytest.mark.parametrize("b", [1, 2, 3, 4, 5])
        def test_many(a, b):
            pass
    ''')
    assert len(found[0].cases) == 1 and not found[0].cases[0].label  # not literal: symbolic
    assert len(found[1].cases) == 16 and found[1].dropped == 9


def test_ranges_of_constants_are_parameter_lists() -> None:
    """`list(range(4))`, `range(1, 9, 2)`, `tuple(range(2))`: their items, as Python makes them
    (JAX's race-detection tests name a write location by `check_location=list(range(4))`)."""
    found = sites('''
        import pytest
        from absl.testing import parameterized
        class T(parameterized.TestCase):
            @parameterized.product(flag=[False, True], loc=list(range(4)))
            def test_product(self, flag, loc):
                pass
            @parameterized.parameters(*range(3))
            def test_star(self, n):
                pass
        @pytest.mark.parametrize("n", range(1, 9, 2))
        def test_odd(n):
            pass
        @pytest.mark.parametrize("n", tuple(range(2)))
        def test_tuple(n):
            pass
        @pytest.mark.parametrize("n", range(N))
        def test_not_constant(n):
            pass
    ''')
    assert [c.label for c in found[0].cases] == [(("flag", "False"), ("loc", str(i))) for i in range(4)] + \
        [(("flag", "True"), ("loc", str(i))) for i in range(4)]
    assert [c.label for c in found[1].cases] == [(("n", str(i)),) for i in range(3)]
    assert [c.label for c in found[2].cases] == [(("n", str(i)),) for i in range(1, 9, 2)]
    assert [c.label for c in found[3].cases] == [(("n", "0"),), (("n", "1"),)]
    assert len(found[4].cases) == 1 and not found[4].cases[0].label


def test_product_covers_every_axis_value_first() -> None:
    items = tuple(TupleVal(()) for _ in range(2 * 3 * 2))
    p = ProductVal(items, False, (2, 3, 2))
    order = p.covering_order()
    assert sorted(order) == list(range(12))
    # (0,0,0), (1,1,1), (0,2,0): every value of every axis within the first three
    assert order[:3] == [0, 1 * 6 + 1 * 2 + 1, 0 * 6 + 2 * 2 + 0]


KERNEL = '''
import functools
import itertools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    o_ref[...] = acc_ref[...]

  pl.run_scoped(body, ALLOC)


def f(a, b):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((a.shape[0], b.shape[1]), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=plgpu.SMEM), pl.BlockSpec(memory_space=plgpu.SMEM)],
      out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
  )(a, b)

'''


def errors(src: str) -> list[str]:
    return [d.message for d in diagnostics(analyze(src, "k.py")) if d.severity == Severity.ERROR]


def test_smem_accumulator_without_an_entry_point() -> None:
    # The operand shapes are not known, but an SMEM accumulator fails JAX's last check: an
    # error with that check's message, sizes by name (issue #7 item 5).
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32)")
    assert errors(src) == ["Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[a.shape[0], b.shape[1]]}"]


def test_make_jaxpr_in_main_block() -> None:
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32)") + '''
if __name__ == "__main__":
  jax.make_jaxpr(f)(jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),
                    jax.ShapeDtypeStruct((64, 128), jnp.bfloat16))
'''
    assert errors(src) == ["Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}"]


def test_jit_with_arrays_in_absl_main() -> None:
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32)") + '''
def main(argv):
  a = jnp.zeros((64, 64), jnp.bfloat16)
  b = jax.random.normal(jax.random.key(0), (64, 256), jnp.bfloat16)
  jax.jit(f)(a, b)


if __name__ == "__main__":
  from absl import app
  app.run(main)
'''
    assert errors(src) == ["Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,256]}"]


def test_finding_in_some_contexts_names_them() -> None:
    # The accumulator is an SMEM ref only when the output is 128 wide.
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32) if o_ref.shape[1] == 128 "
                                  "else plgpu.ACC(o_ref.shape, jnp.float32)") + '''
def main():
  for n in (64, 128):
    jax.jit(f).trace(jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),
                     jax.ShapeDtypeStruct((64, n), jnp.bfloat16))


if __name__ == "__main__":
  main()
'''
    analysis = analyze(src, "k.py")
    # (The n=64 context also gets WG018 at lowering: the kernel's SMEM operands are untransformed.)
    diags = [d for d in diagnostics(analysis) if d.severity == Severity.ERROR and d.code != "WG018"]
    line = src.splitlines().index("    jax.jit(f).trace(jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),")
    assert [d.message for d in diags] == [
        "Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}"
        f" (with n=128, from main() at line {line + 1})"]
    assert any(r.span.line == line and "n=128" in r.message for r in diags[0].related)


def test_pytest_parameters_are_contexts() -> None:
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32)") + '''
import pytest

@pytest.mark.parametrize("n", [64, 128])
def test_f(n):
  jax.eval_shape(f, jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),
                 jax.ShapeDtypeStruct((64, n), jnp.bfloat16))
'''
    msgs = errors(src)
    assert sorted(msgs) == sorted(
        f"Expected WGMMAAbstractAccumulatorRef got Ref<smem>{{float32[64,{n}]}}"
        f" (with n={n}, from test_f() at line {src.splitlines().index('def test_f(n):') + 1 + 1})"
        for n in (64, 128))


def test_sweep_cut_by_the_budget_is_said() -> None:
    src = KERNEL.replace("ALLOC", "plgpu.ACC(o_ref.shape, jnp.float32)") + '''
def main():
  for m, n, k in itertools.product(range(64, 64 * 9, 64), range(64, 64 * 9, 64), (64, 128)):
    jax.jit(f).lower(jax.ShapeDtypeStruct((m, k), jnp.bfloat16),
                     jax.ShapeDtypeStruct((k, n), jnp.bfloat16))


if __name__ == "__main__":
  main()
'''
    analysis = analyze(src, "k.py")
    notes = [d for d in diagnostics(analysis) if d.severity == Severity.INFORMATION]
    assert len(notes) == 1 and notes[0].message.startswith("checked ")
    assert "of 128 combinations of this sweep" in notes[0].message
    assert notes[0].span.line == src.splitlines().index(
        "  for m, n, k in itertools.product(range(64, 64 * 9, 64), range(64, 64 * 9, 64), (64, 128)):")


def test_fixture_diagnostics_name_their_contexts() -> None:
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures" / "errors"
    expected = {
        "entry_pytest_parametrize.py": " (with tile_n=64, from test_matmul() at line 53)",
        "entry_sweep_product.py": " (with tile_m=128, tile_n=64, from main() at line 63)",
        "entry_make_jaxpr_main_block.py": "",  # the only context: a plain error
        "entry_jit_absl_main.py": "",
    }
    for name, note in expected.items():
        path = fixtures / name
        diags = [d for d in diagnostics(analyze(path.read_text(), str(path)))
                 if d.severity == Severity.ERROR]
        assert len(diags) == 1, (name, diags)
        assert diags[0].message.endswith(note) and (note or "(with" not in diags[0].message), name
        if note:
            line = int(note.rsplit(" ", 1)[1].rstrip(")")) - 1
            assert any(r.span.line == line for r in diags[0].related), name


def test_hover_and_inlay_hints_name_the_contexts() -> None:
    from wgmma_lsp.ide.hover import hover
    from wgmma_lsp.ide.inlay_hints import inlay_hints
    from wgmma_lsp.spans import Span

    src = '''
import jax
import jax.numpy as jnp


def f(x):
  y = x * 2
  return y


def symbolic(x):
  z = jnp.zeros((x.shape[0], 8), jnp.float32)
  return z


if __name__ == "__main__":
  for n in (64, 128):
    jax.make_jaxpr(f)(jax.ShapeDtypeStruct((n, 32), jnp.bfloat16))
'''
    analysis = analyze(src, "k.py")
    lines = src.splitlines()
    y_line = lines.index("  y = x * 2")
    text = hover(analysis, y_line, 2).markdown
    assert "`bfloat16[64,32]` (with n=64, from the \\_\\_main\\_\\_ block at line 18)" in text
    assert "`bfloat16[128,32]` (with n=128, from the \\_\\_main\\_\\_ block at line 18)" in text
    hints = {h.line: h for h in inlay_hints(analysis, Span(0, 0, len(lines), 0))}
    assert hints[y_line].label == ": bfloat16[64,32] | bfloat16[128,32]"
    assert "with n=128" in hints[y_line].tooltip
    z_line = lines.index("  z = jnp.zeros((x.shape[0], 8), jnp.float32)")
    assert hints[z_line].label == ": float32[x.shape[0], 8]" and hints[z_line].tooltip == ""


def test_errors_a_test_expects_are_not_reported() -> None:
    src = KERNEL.replace("ALLOC", "plgpu.SMEM(o_ref.shape, jnp.float32)") + '''
import pytest


def test_smem_accumulator_is_rejected():
  with pytest.raises(TypeError, match="Expected WGMMAAbstractAccumulatorRef"):
    jax.make_jaxpr(f)(jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),
                      jax.ShapeDtypeStruct((64, 128), jnp.bfloat16))
'''
    # The only context that reaches the kernel expects JAX's error: nothing to report.
    assert errors(src) == []


def test_many_test_cases_share_the_budget_and_say_so() -> None:
    body = KERNEL.replace("ALLOC", "plgpu.ACC(o_ref.shape, jnp.float32)") + "\nimport pytest\n"
    for t in range(30):
        body += f'''
@pytest.mark.parametrize("n", [64, 128, 192, 256])
def test_{t}(n):
  jax.eval_shape(f, jax.ShapeDtypeStruct((64, 64), jnp.bfloat16),
                 jax.ShapeDtypeStruct((64, n + {t}), jnp.bfloat16))
'''
    analysis = analyze(body, "k.py")
    notes = [d.message for d in diagnostics(analysis) if d.severity == Severity.INFORMATION]
    assert notes and all(m.startswith("checked ") and m.endswith("left out the others") for m in notes)


def test_a_parameter_object_keeps_what_its_init_sets() -> None:
    """A test parameter built by a class of the user's (`[Helper(False), Helper(True)]`, as JAX's
    race-detection tests pass a `WarpSpecializeHelper`): each case's object has the attributes its
    `__init__` set, as in CPython (they were unknown: the parameters are evaluated quietly, and a
    quiet evaluation's own objects were not changed exactly)."""
    source = textwrap.dedent('''
        import pytest

        class Helper:
            def __init__(self, ws):
                self.ws = ws

            def count(self, n):
                if n > 4:
                    raise ValueError(n)
                return 1 if self.ws else n

        @pytest.mark.parametrize("h", [Helper(False), Helper(True)])
        def test_h(h):
            threads = h.count(2)
    ''')
    analysis = analyze(source, "/tmp/test_param_object.py")
    line = next(i for i, t in enumerate(source.splitlines()) if "threads = " in t)
    [record] = [r for span, r in analysis.records.items() if span.line == line and r.name == "threads"]
    assert sorted(str(v) for v in record.values) == ["Const(value=1)", "Const(value=2)"]


def test_parameter_sets_past_the_listing_limit_are_said_as_such() -> None:
    """With every listed set checked (`--sweeps all`), the rest were never listed: the note says
    the per-test limit, not the budget."""
    from wgmma_lsp.entry.discover import MAX_CASES
    from wgmma_lsp.interpret.sweep_budget import sweep_mode

    source = textwrap.dedent('''
        import pytest
        @pytest.mark.parametrize("a", [1, 2, 3, 4, 5])
        @pytest.mark.parametrize("b", [1, 2, 3, 4, 5])
        def test_many(a, b):
            assert a + b > 0
    ''')
    with sweep_mode("all"):
        notes = [msg for _, msg in analyze(source, "/tmp/test_many_sets.py").notes]
    assert notes == [f"checked {MAX_CASES} of 25 parameter sets of this test; at most {MAX_CASES} are checked per test"]

"""Test modules written in JAX's own style: their test methods run as their runner runs them.

JAX's tests (tests/pallas/mosaic_gpu_test.py) hold their kernels in test methods of classes
derived from a base of the module (`class PallasCallTest(PallasTest, ...)`), call them through
the base's helpers (`self.kernel(...)`, which sets the class's lowering semantics), and rerun every
test under Warpgroup semantics in a subclass made by a metaclass keyword
(`class PallasCallWGTest(PallasCallTest, lowering_semantics=...)`). Each test runs once per class
that has it, with an instance of that class (entry/discover.py, entry/test_contexts.run_case,
interpret/metaclasses.py). Ground truth: real JAX running the same test methods, each class's
and each parameter set's, lowering them for CUDA on the CPU (jax_oracle.run_program_entries).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.entry.discover import discover
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret.sweep_budget import sweep_mode

FIXTURE = Path(__file__).parent / "fixtures" / "test_classes" / "jax_style_test.py"


def _findings(source: str, path: str) -> list:
    with sweep_mode("all"):  # (as `wgmma-lsp check`: every class's run of every test)
        return analyze(source, path).findings


def test_jax_style_test_module_against_jax() -> None:
    """Every error is JAX's, at JAX's line, proven in exactly the runs (class, test, parameters)
    in which JAX raises it; every run JAX fails is found."""
    source = FIXTURE.read_text()
    with sweep_mode("all"):
        analysis = analyze(source, str(FIXTURE))
    got = {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip())
           for d in diagnostics(analysis) if d.severity in (Severity.ERROR, Severity.WARNING)}
    assert got == expectations(source)
    assert all(d.severity == Severity.ERROR for d in diagnostics(analysis) if d.code != "WG903")
    raised: dict[tuple[int, str], set[str]] = {}
    for v in trace_file(FIXTURE, lower=True):
        if v.message is not None:
            raised.setdefault((v.line, v.message.rstrip()), set()).add(v.entry)
    assert set(raised) == {(line, msg) for line, _, msg in expectations(source)}
    for f in analysis.findings:
        runs = {c.label().replace("from ", "").rsplit(" at line", 1)[0] for c in f.contexts}
        # JAX's run labels read `CopyWGTest.test_rows() rows=64`; ours `with rows=64, CopyWGTest.test_rows()`
        theirs = {_as_context(e) for e in raised[(f.blame_line + 1, strip_context_note(f.message).rstrip())]}
        assert runs == theirs, f.message


def _as_context(entry: str) -> str:
    name, _, params = entry.partition(" ")
    return f"with {', '.join(params.split())}, {name}" if params else name


def test_each_class_runs_its_tests_with_its_lowering_semantics() -> None:
    """The Warpgroup subclass's run of an inherited test is its own context, named by its class,
    and its kernel is lowered with the semantics its metaclass keyword set."""
    source = FIXTURE.read_text()
    by_context = {}
    for f in _findings(source, str(FIXTURE)):
        if f.rule.code == "WG084":
            (ctx,) = f.contexts
            by_context[ctx.origin] = f.message
    assert set(by_context) == {"CopyTest.test_cumsum()", "CopyWGTest.test_cumsum()"}
    assert "LoweringSemantics.Lane " in by_context["CopyTest.test_cumsum()"]
    assert "LoweringSemantics.Warpgroup " in by_context["CopyWGTest.test_cumsum()"]


def _sites(src: str) -> list[tuple[str, bool, bool]]:
    return [(s.name, s.unittest, s.inherited) for s in discover(ast.parse(textwrap.dedent(src)))]


def test_subclasses_of_test_classes_are_test_classes_and_inherit_their_tests() -> None:
    src = """
    class Base(jtu.JaxTestCase, metaclass=Meta):
      def kernel(self): ...
    class Mixin:
      def test_from_mixin(self): ...
    class CallTest(Base, Mixin, jtu.CudaArchSpecificTest):
      def test_a(self): ...
      def test_b(self): ...
    class CallWGTest(CallTest, lowering_semantics=WG):
      ...
    class Deeper(CallWGTest):
      def test_b(self): ...   # overrides CallTest's
      test_a = None           # hides it
    class Plain:
      def test_not_run(self): ...
    """
    assert _sites(src) == [
        ("CallTest.test_a()", True, False), ("CallTest.test_b()", True, False),
        ("CallTest.test_from_mixin()", True, True),
        ("CallWGTest.test_a()", True, True), ("CallWGTest.test_b()", True, True),
        ("CallWGTest.test_from_mixin()", True, True),
        ("Deeper.test_b()", True, False), ("Deeper.test_from_mixin()", True, True),
    ]


def test_pytest_style_classes_keep_an_unknown_self() -> None:
    """A `Test*` class with no `TestCase` base is pytest's: not a unittest class."""
    assert _sites("""
    class TestThing:
      def test_a(self): ...
    class TestMore(TestThing):
      def test_b(self): ...
    """) == [("TestThing.test_a()", False, False), ("TestMore.test_b()", False, False),
             ("TestMore.test_a()", False, True)]


METACLASS = '''
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import mosaic_gpu as plgpu

class Meta(type):
  def __new__(mcs, name, bases, ns, semantics=plgpu.LoweringSemantics.Lane):
    cls = {make}
    cls.SEMANTICS = semantics
    return cls

class Base(metaclass=Meta):
  SEMANTICS = plgpu.LoweringSemantics.Lane

class WG(Base, semantics=plgpu.LoweringSemantics.Warpgroup):
  pass

def body(x_ref, o_ref):
  o_ref[...] = lax.cumsum(x_ref[...], axis=0)

def f(x):
  params = plgpu.CompilerParams(lowering_semantics=WG.SEMANTICS)
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32), compiler_params=params)(x)

# wgmma-lsp: trace f(f32[128,128])
'''


def test_a_metaclass_keyword_sets_the_attribute_its_new_sets(tmp_path: Path) -> None:
    """The metaclass's `__new__` runs with the class keyword: WG's semantics are Warpgroup, as
    JAX lowers it (not the base's Lane)."""
    path = tmp_path / "meta.py"
    path.write_text(METACLASS.format(make="super().__new__(mcs, name, bases, ns)"))
    msgs = {f.message for f in _findings(path.read_text(), str(path)) if f.rule.code == "WG084"}
    assert len(msgs) == 1 and "LoweringSemantics.Warpgroup " in msgs.pop()
    (verdict,) = [v for v in trace_file(path, lower=True) if v.message is not None]
    assert "LoweringSemantics.Warpgroup " in verdict.message


def test_a_metaclass_the_analysis_cannot_follow_leaves_the_attribute_unknown(tmp_path: Path) -> None:
    """A `type.__new__` given another namespace than the statement's: not followed, so nothing
    is claimed of the class (never the base class's Lane)."""
    path = tmp_path / "meta.py"
    path.write_text(METACLASS.format(make="super().__new__(mcs, name, bases, dict(ns))"))
    assert [f for f in _findings(path.read_text(), str(path)) if f.rule.code == "WG084"] == []


def test_inherited_tests_left_out_are_said_once_per_class(monkeypatch) -> None:
    """A subclass's inherited runs the budget leaves out: one WG903 note at the subclass, with
    the counts of every test it inherits (not one per test, at the base's methods)."""
    from wgmma_lsp.interpret import sweep_budget

    monkeypatch.setattr(sweep_budget, "STEPS_PER_LINE", 0)  # only each test's own first set runs
    monkeypatch.setattr(sweep_budget, "MIN_STEPS", 1)
    source = textwrap.dedent('''
        from absl.testing import absltest, parameterized
        from jax.experimental.pallas import mosaic_gpu as plgpu

        class BaseTest(parameterized.TestCase):
            @parameterized.parameters(1, 2, 3)
            def test_a(self, n):
                self.assertGreater(n, 0)

            def test_b(self):
                self.assertTrue(plgpu is not None)

        class OtherTest(BaseTest):
            pass
    ''')
    notes = [(span.line, msg) for span, msg in analyze(source, "/tmp/inherits_test.py").notes]
    other = next(i for i, t in enumerate(source.splitlines()) if t.startswith("class OtherTest"))
    assert (other, "checked 0 of 4 parameter sets of the 2 tests OtherTest inherits; the analysis budget "
            "left out the others") in notes
    assert not any("inherits it" in msg for _, msg in notes)

"""Python's argument binding, reproduced as text (interpret/binding.py), against CPython itself,
and the signatures read from the installed jax's source (interpret/jax_source.py)."""

from __future__ import annotations

import ast
import random
import subprocess
import sys

import pytest

from wgmma_lsp.interpret import jax_source
from wgmma_lsp.interpret.binding import bind
from wgmma_lsp.interpret.jax_version import default_lowering_semantics, matches


def _random_function(rng: random.Random) -> str:
    names = ["a", "b", "c", "d", "e"]
    rng.shuffle(names)
    params = names[:rng.randint(0, 5)]
    n_kwonly = rng.randint(0, len(params))
    pos, kwonly = params[:len(params) - n_kwonly], params[len(params) - n_kwonly:]
    posonly = pos[:rng.randint(0, len(pos))] if rng.random() < 0.3 else []
    rest = pos[len(posonly):]
    with_default = set(pos[len(pos) - rng.randint(0, len(pos)):])
    parts = [x + ("=0" if x in with_default else "") for x in posonly] + (["/"] if posonly else [])
    parts += [x + ("=0" if x in with_default else "") for x in rest]
    if rng.random() < 0.2:
        parts.append("*args")
    elif kwonly:
        parts.append("*")
    parts += [x + ("=0" if rng.random() < 0.5 else "") for x in kwonly]
    if rng.random() < 0.3:
        parts.append("**kw")
    return f"def f({', '.join(parts)}): pass"


def test_binding_errors_are_cpythons() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        src = _random_function(rng)
        ns: dict = {}
        exec(src, ns)
        fn = ast.parse(src).body[0]
        assert isinstance(fn, ast.FunctionDef)
        sig = jax_source.Signature("f", jax_source._function_params(fn.args))
        n_pos = rng.randint(0, 4)
        keywords = rng.sample(["a", "b", "c", "d", "e", "z"], rng.randint(0, 3))
        try:
            ns["f"](*range(n_pos), **{k: 1 for k in keywords})
            real = None
        except TypeError as e:
            real = str(e)
        got = bind(sig, n_pos, keywords)
        assert (got.message if got else None) == real, (src, n_pos, keywords)


def test_keyword_suggestions_follow_the_running_python() -> None:
    """CPython 3.13 appends `. Did you mean 'out_type'?`; 3.11 and 3.12 do not."""
    src = "def kernel(body=None, *, out_type=(), scratch_types=(), **mesh_kwargs): pass\n" \
          "def load(src, *, layout=None, optimized=True): pass"
    ns: dict = {}
    exec(src, ns)
    tree = ast.parse(src)
    for fn, kw in ((tree.body[1], "optimised"), (tree.body[1], "out_shape")):
        assert isinstance(fn, ast.FunctionDef)
        try:
            ns[fn.name](1, **{kw: 1})
            real = None
        except TypeError as e:
            real = str(e)
        got = bind(jax_source.Signature(fn.name, jax_source._function_params(fn.args)), 1, [kw])
        assert (got.message if got else None) == real


def test_dataclass_init_binding_is_cpythons(tmp_path) -> None:
    source = '''
import dataclasses
from typing import ClassVar

@dataclasses.dataclass(frozen=True)
class Base:
  a: int
  b: int = 0

@dataclasses.dataclass(frozen=True, kw_only=True)
class Mesh(Base):
  grid: tuple = ()
  names: tuple = dataclasses.field(default=(), init=True)
  hidden: int = dataclasses.field(default=0, init=False)
  count: ClassVar[int] = 0
'''
    ns: dict = {}
    exec(compile(source, "<dataclasses>", "exec", dont_inherit=True), ns)  # real annotations
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Mesh")
    sig = jax_source._class_signature(cls, tree, "m")
    assert sig is not None
    for n_pos, keywords in [(0, ["out_shape"]), (3, []), (0, []), (1, ["a"]), (1, ["grid", "hidden"]),
                            (2, ["grid", "names"]), (0, ["a", "count"])]:
        try:
            ns["Mesh"](*range(n_pos), **{k: 1 for k in keywords})
            real = None
        except TypeError as e:
            real = str(e)
        got = bind(sig, n_pos, keywords)
        assert (got.message if got else None) == real, (n_pos, keywords)


def test_installed_signatures_follow_the_version() -> None:
    kernel = jax_source.signature("plgpu.kernel")
    load = jax_source.signature("plgpu.load")
    assert kernel is not None and load is not None
    kernel_params = {p.name for p in kernel.params}
    assert "out_type" in kernel_params and "scratch_types" in kernel_params
    assert kernel.forwards_to is not None and kernel.forwards_to.qualname == "Mesh.__init__"
    if matches("0.10"):
        assert "out_shape" in kernel_params and [p.name for p in load.params][:2] == ["src", "idx"]
        assert default_lowering_semantics() == "lane"
        assert jax_source.missing_attribute("plgpu.mma") is not None
        assert jax_source.missing_attribute("plgpu.transform_ref") is None
    if matches(">=0.12"):
        assert "out_shape" not in kernel_params and "idx" not in {p.name for p in load.params}
        assert default_lowering_semantics() == "warpgroup"
        assert jax_source.missing_attribute("plgpu.transform_ref") == \
            "module 'jax.experimental.pallas.mosaic_gpu' has no attribute 'transform_ref'"
        assert "removed in JAX v0.12.0" in (jax_source.missing_attribute("pl.dot") or "")
    assert jax_source.missing_attribute("plgpu.wgmma") is None


def test_signatures_match_the_imported_jax() -> None:
    """What the source says is what `inspect.signature` of the real objects says."""
    import inspect

    import jax.experimental.pallas as pl
    import jax.experimental.pallas.mosaic_gpu as plgpu

    checked = 0
    for prefix, module in (("plgpu", plgpu), ("pl", pl)):
        for name in sorted(n for n in dir(module) if not n.startswith("_")):
            sig = jax_source.signature(f"{prefix}.{name}")
            if sig is None:
                continue
            obj = getattr(module, name)
            real = inspect.signature(obj if not isinstance(obj, type) else obj.__init__)
            ours = [p.name for p in sig.params]
            assert ours == list(real.parameters), (prefix, name)
            checked += 1
    assert checked > 40


def test_reading_the_source_does_not_import_jax() -> None:
    code = ("import sys; from wgmma_lsp.interpret import jax_source as S; "
            "S.signature('plgpu.kernel'); S.missing_attribute('pl.dot'); "
            "from wgmma_lsp.interpret.jax_version import default_lowering_semantics as d; d(); assert 'jax' not in sys.modules, 'imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("version, spec, ok", [
    ((0, 10, 2), "0.10", True), ((0, 10, 2), "<0.12", True), ((0, 12, 0), "<0.12", False),
    ((0, 12, 0), ">=0.12", True), ((0, 12, 0), "0.12", True), ((0, 11, 3), ">=0.11,<0.12", True),
    ((0, 10, 2), "==0.10.2", True), ((0, 10, 1), "==0.10.2", False), ((0, 13, 0), ">0.12", True),
])
def test_version_specs(version, spec, ok) -> None:
    assert matches(spec, version) is ok


def test_a_keyword_on_another_line_names_the_line_jax_blames() -> None:
    """The squiggle sits on the keyword; a related location names the call's first line, which
    is the line Python's traceback (and JAX's error) shows
    (tests/fixtures/errors/api_keyword_in_multiline_call.py checks that line against JAX)."""
    from pathlib import Path

    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics

    path = Path(__file__).parent / "fixtures" / "errors" / "api_keyword_in_multiline_call.py"
    [d] = [d for d in diagnostics(analyze(path.read_text(), str(path))) if d.code == "WG090"]
    assert (d.span.line + 1, [(r.span.line + 1, r.message) for r in d.related]) == (
        19, [(14, "JAX raises this at this call (its traceback shows the line where the call starts)")])

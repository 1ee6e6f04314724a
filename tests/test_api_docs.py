"""The API documentation the hover and the signature help show comes from the installed JAX's
own source, read with `ast`: each name's signature and first docstring paragraph are those the
imported JAX (here, in the test only) reports through `inspect`; the constraints listed are the
rules that name the API; without JAX the bundled facts give the parameters and say so."""

from __future__ import annotations

import inspect
from pathlib import Path

import jax
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from markdown_it import MarkdownIt

from wgmma_lsp import environment
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide import api_docs, api_help
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.rules.registry import RULES

MODULES = {"plgpu": plgpu, "pl": pl}
NAMES = ["plgpu.wgmma", "pl.run_scoped", "plgpu.ACC", "plgpu.TilingTransform", "plgpu.SwizzleTransform",
         "plgpu.copy_gmem_to_smem", "plgpu.kernel", "pl.pallas_call", "plgpu.Barrier", "plgpu.wgmma_accumulator_load"]


def imported(canonical: str):
    prefix, _, name = canonical.partition(".")
    return getattr(MODULES[prefix], name)


def paragraph(doc: str | None) -> str | None:
    """The first paragraph of a docstring, lines stripped and joined (computed independently)."""
    if not doc:
        return None
    first = doc.strip().split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines()) or None


@pytest.mark.parametrize("canonical", NAMES)
def test_the_docs_are_the_installed_jaxs_own(canonical: str) -> None:
    obj = imported(canonical)
    doc = api_docs.api_doc(canonical)
    assert doc is not None and not doc.bundled
    assert doc.jax_version == jax.__version__
    unwrapped = inspect.unwrap(obj)
    assert Path(jax.__file__).parent.parent / doc.where == Path(inspect.getsourcefile(unwrapped))
    own = inspect.getdoc(obj)
    generated = inspect.isclass(obj) and own is not None and own.startswith(f"{obj.__name__}(")
    assert doc.summary == (None if generated else paragraph(own))  # dataclasses write their own
    assert [p.name for p in doc.params] == list(inspect.signature(obj).parameters)
    label, offsets = doc.label()
    assert [label[a:b].split(":")[0].split("=")[0].lstrip("*") for a, b in offsets] == [p.name for p in doc.params]


def test_the_signature_shows_annotations_and_defaults_as_written() -> None:
    doc = api_docs.api_doc("pl.run_scoped")
    assert doc is not None
    sig = inspect.signature(pl.run_scoped)
    collective = sig.parameters["collective_axes"]
    text = next(p.text for p in doc.params if p.name == "collective_axes")
    assert text.startswith("collective_axes: ") and text.endswith(f" = {collective.default!r}")
    assert doc.label()[0].startswith("run_scoped(f: ") and "*types" in doc.label()[0]


def test_the_constraints_are_the_rules_naming_the_api() -> None:
    wgmma = {r.code for r in api_help.constraints("plgpu.wgmma")}
    assert wgmma == {c for c, r in RULES.items() if "plgpu.wgmma" in r.apis}
    n_size = next(r for r in RULES.values() if r.name == "wgmma-n-size")
    k_swizzle = next(r for r in RULES.values() if r.name == "wgmma-k-swizzle")
    assert {n_size.code, k_swizzle.code} <= wgmma
    assert api_help.constraints("plgpu.no_such_api") == []


def test_every_api_named_by_a_rule_is_documented_or_a_constant() -> None:
    """A rule's `apis` names a public name of this JAX (a typo would list its rule nowhere)."""
    from wgmma_lsp.interpret import jax_source

    for rule in RULES.values():
        for api in rule.apis:
            if api.startswith(("plgpu.", "pl.")):
                assert jax_source.export(api) is not None or jax_source.missing_attribute(api), (rule.code, api)


SOURCE = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.SMEM((64, 128), jnp.float32))


if __name__ == "__main__":
  a = jax.ShapeDtypeStruct((64, 64), jnp.bfloat16)
  b = jax.ShapeDtypeStruct((64, 128), jnp.bfloat16)
  out = jax.ShapeDtypeStruct((64, 128), jnp.float32)
  jax.make_jaxpr(plgpu.kernel(kernel, out_type=out))(a, b)
'''


def html(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def test_the_hover_on_a_call_shows_the_docs_the_arguments_and_the_verdicts() -> None:
    analysis = analyze(SOURCE, "k.py")
    line = SOURCE.splitlines().index("    plgpu.wgmma(acc_ref, a_ref, b_ref)")
    info = hover(analysis, line, SOURCE.splitlines()[line].index("wgmma") + 1)
    assert info is not None
    out = html(info.markdown)
    doc = api_docs.api_doc("plgpu.wgmma")
    assert doc is not None and doc.summary is not None
    assert doc.label()[0].replace(">", "&gt;") in out  # the signature, in a code block
    assert doc.summary in out
    assert f"jax {jax.__version__}: {doc.where}" in out  # `_src` shown literally, not emphasis
    # The arguments' avals here, as the hover on each argument shows them.
    acc_col = SOURCE.splitlines()[line].index("acc_ref")
    acc_hover = hover(analysis, line, acc_col)
    assert acc_hover is not None
    acc_aval = acc_hover.markdown.split("`")[1]
    assert f"<code>acc</code>: <code>{acc_aval.replace('<', '&lt;').replace('>', '&gt;')}</code>" in out
    # The diagnostic in the call is its rule's constraint failing; the others are not known after it.
    failing = {f.rule.code for f in analysis.findings if f.span.line == line}
    assert failing, "the planted error is found"
    for code in failing:
        assert f"✗ {code} " in out
    assert "✓" not in out


def test_the_hover_without_a_call_lists_the_constraints() -> None:
    source = SOURCE.replace("  pl.run_scoped(body, plgpu.SMEM((64, 128), jnp.float32))",
                            "  scoped = pl.run_scoped\n  scoped(body, plgpu.SMEM((64, 128), jnp.float32))")
    analysis = analyze(source, "k.py")
    line = source.splitlines().index("  scoped = pl.run_scoped")
    info = hover(analysis, line, source.splitlines()[line].index("run_scoped") + 1)
    assert info is not None
    for rule in api_help.constraints("pl.run_scoped"):
        assert f"{rule.code} " in info.markdown
    assert "Checked by wgmma-lsp" in info.markdown and "✓" not in info.markdown


def test_without_jax_the_bundled_parameters_are_shown_and_said_to_be(tmp_path: Path) -> None:
    (tmp_path / "pyvenv.cfg").write_text("home = /nowhere\n")
    before = environment.active()
    environment.activate(environment.discover(str(tmp_path), "--python"))
    try:
        doc = api_docs.api_doc("plgpu.wgmma")
        assert doc is not None and doc.bundled and doc.summary is None
        bundled = jax_facts.bundled().signatures["plgpu.wgmma"]
        assert [p.name for p in doc.params] == [p.name for p in bundled.params]
        found = api_help.help_for(None, "plgpu.wgmma", None)
        assert found is not None
        assert "no JAX in the analysed environment" in api_help.markdown(found)
    finally:
        environment.activate(before)
    assert not api_docs.api_doc("plgpu.wgmma").bundled  # cached per installation, not globally


@pytest.mark.parametrize("typed, callee, positional, keyword", [
    ("plgpu.wgmma(acc, ", "plgpu.wgmma", 1, None),
    ("plgpu.wgmma(acc, f(x, y), ", "plgpu.wgmma", 2, None),  # a closed call inside: skipped
    ("pl.run_scoped(body, plgpu.ACC((64, ", "plgpu.ACC", 0, None),  # the innermost open call
    ("pl.run_scoped(body, collective_axes=", "pl.run_scoped", 1, "collective_axes"),
    ("plgpu.wgmma(acc, ')', \"(\", ", "plgpu.wgmma", 3, None),  # brackets in strings
    ("plgpu . wgmma (acc,  # a comment (\n      a, ", "plgpu.wgmma", 2, None),
])
def test_the_open_call_is_found_in_half_typed_text(typed: str, callee: str, positional: int,
                                                    keyword: str | None) -> None:
    from wgmma_lsp.ide.signature_help import open_calls

    text = f"def kernel(acc, a):\n  {typed}"
    last = text.splitlines()[-1]
    (first, *_) = open_calls(text, text.count("\n"), len(last))
    assert (first.callee, first.positional, first.keyword) == (callee, positional, keyword)
    lines = text.split("\n")
    assert lines[first.span.line][first.span.col:first.span.end_col].replace(" ", "") == callee


def test_no_open_call_inside_a_string_or_after_the_call() -> None:
    from wgmma_lsp.ide.signature_help import open_calls

    assert open_calls('x = "plgpu.wgmma(acc, ', 0, len('x = "plgpu.wgmma(acc, ')) == []
    assert open_calls("plgpu.wgmma(acc, a, b) ", 0, 23) == []


def test_the_callee_is_resolved_through_the_texts_imports() -> None:
    from wgmma_lsp.ide.signature_help import canonical_callee

    text = ("import jax.experimental.pallas.mosaic_gpu as mgpu\n"
            "from jax.experimental.pallas.mosaic_gpu import (\n    WGMMAAccumulatorRef as Acc,\n)\n")
    assert canonical_callee("mgpu.wgmma", text, None) == "plgpu.wgmma"
    assert canonical_callee("Acc", text, None) == "plgpu.ACC"
    assert canonical_callee("numpy.zeros", text, None) is None


def test_an_api_name_the_analysis_recorded_nothing_for_is_documented_from_the_imports() -> None:
    from wgmma_lsp.analysis import Analysis

    source = "from jax.experimental.pallas import mosaic_gpu as plgpu\nplgpu.wgmma(acc, a, b)\n"
    nothing = Analysis.empty(source, "k.py")  # no values recorded (e.g. not analysed yet)
    info = hover(nothing, 1, len("plgpu.wg"))
    doc = api_docs.api_doc("plgpu.wgmma")
    assert info is not None and doc is not None
    assert (info.span.col, info.span.end_col) == (0, len("plgpu.wgmma"))
    assert doc.label()[0] in info.markdown and "Checked by wgmma-lsp" in info.markdown
    assert hover(nothing, 1, 2) is None  # the module name alone: nothing to document

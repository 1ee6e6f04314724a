"""Lowering-time rules on `plgpu.kernel` kernels, checked against the installed JAX's Mosaic GPU
lowering on the CPU (`jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`).

Unlike `pl.pallas_call` kernels (tests/test_lowering_rules.py, JAX 0.10 only: 0.12 no longer
lowers a Mosaic GPU `pallas_call`), `plgpu.kernel` lowers on every supported JAX, so these
fixtures run on each version, under the installed JAX's default lowering semantics (Lane in
0.10, Warpgroup in 0.12) unless the kernel names one. `# E[...]`/`# B[...]` comments say where
the versions differ. A fixture with no expectation for the installed JAX must lower cleanly and
get no error. `kernel_level_*` fixtures hold errors JAX raises with no line of the file in its
traceback (see `test_kernel_level_fixture`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_oracle import expectations, jax_expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

DIR = Path(__file__).parent / "fixtures" / "lowering_kernel"
FIXTURES = sorted(p for p in DIR.glob("*.py") if not p.name.startswith("kernel_level_"))


def _errors(source: str, path: Path) -> set[tuple[int, str, str]]:
    # Some of JAX's messages end in a space (0.12's copy shape check); `# E:` comments cannot show it.
    return {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip())
            for d in diagnostics(analyze(source, str(path))) if d.severity == Severity.ERROR}


def _jax(path: Path) -> set[tuple[int | None, str]]:
    return {(v.line, v.message.rstrip() or f"(empty {v.exc_type})")
            for v in trace_file(path, lower=True) if v.message is not None}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_kernel_lowering_fixture(path: Path) -> None:
    source = path.read_text()
    assert _errors(source, path) == expectations(source)
    assert _jax(path) == jax_expectations(source)


KERNEL_LEVEL = sorted(DIR.glob("kernel_level_*.py"))


@pytest.mark.parametrize("path", KERNEL_LEVEL, ids=lambda p: p.stem)
def test_kernel_level_fixture(path: Path) -> None:
    """Errors raised after the kernel's frames are gone (layout inference, wgmma.py's checks):
    JAX's error names no line of the file. `# B:` gives JAX's text on the line our diagnostic
    blames, which must be the `plgpu.kernel` call; the diagnostic must quote JAX's text."""
    source = path.read_text()
    expected, blamed = expectations(source), expectations(source, "B")
    if not expected and not blamed:  # this JAX accepts the kernel (a `# E[>=...]`-only fixture)
        assert _errors(source, path) == set()
        assert _jax(path) == set()
        return
    assert expected and blamed
    assert _errors(source, path) == expected
    assert _jax(path) == {(None, msg) for _, _, msg in blamed}
    kernel_line = next(i for i, text in enumerate(source.splitlines(), 1) if "plgpu.kernel(" in text)
    findings = [f for f in analyze(source, str(path)).findings if f.rule.code in {c for _, c, _ in blamed}]
    assert findings and all(f.blame_line + 1 == kernel_line for f in findings)
    assert {ln for ln, _, _ in blamed} == {kernel_line}
    assert all(msg in f.message for _, _, msg in blamed for f in findings)


def test_layout_inference_facts_are_read_from_the_installed_jax() -> None:
    """The Warpgroup facts the models read from layout_inference.py are found in every supported
    JAX (a rename there would otherwise silence the checks that use them)."""
    from wgmma_lsp.interpret import jax_source

    assert jax_source.layout_failure_message() is not None
    assert jax_source.layout_inference_takes_swizzle_only() is not None


SCALAR_COPY = '''\
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(in_ref, out_ref, smem_ref, barrier):
  smem_ref[...] = 100
  plgpu.commit_smem()
  plgpu.copy_gmem_to_smem(in_ref, smem_ref, barrier)
  plgpu.barrier_wait(barrier)
  out_ref[...] = smem_ref[...]


def run(x):
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((), jnp.int32),
                      scratch_types=[plgpu.SMEM((), jnp.int32), plgpu.Barrier()]PARAMS)(x)

# wgmma-lsp: trace run(i32[])
'''


@pytest.mark.parametrize("semantics", [None, "Lane", "Warpgroup"])
def test_a_tma_copy_of_a_scalar_as_jax_lowers_it(semantics: str | None, tmp_path: Path) -> None:
    """A TMA copy of a 0-d SMEM ref (JAX's race-detection tests copy scalars): JAX's own verdict
    for the installed version — the copy's byte count (Lane, at the copy), one element along
    "the last dimension" (0.12, Warpgroup: 32 bits, raised with no line of the file: blamed at
    the launch), or an IndexError of JAX's own (0.10, Warpgroup: it indexes the empty shape),
    where the analysis claims nothing and does not fail itself either (it did: WG904)."""
    params = "" if semantics is None else \
        f", compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.{semantics})"
    path = tmp_path / "scalar_copy.py"
    path.write_text(SCALAR_COPY.replace("PARAMS", params))
    [verdict] = trace_file(path, lower=True)
    analysis = analyze(path.read_text(), str(path))
    assert not analysis.incomplete
    ours = [(f.blame_line + 1, f.message) for f in analysis.findings if f.certain]
    assert verdict.message is not None
    if verdict.exc_type == "IndexError":
        assert ours == []
        return
    kernel_line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "plgpu.kernel(" in t)
    assert [(ln, verdict.message in msg) for ln, msg in ours] == [(verdict.line or kernel_line, True)]

"""Bad input never breaks the analyzer: half-typed lines, truncated files, odd encodings, huge files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from wgmma_lsp.analysis import Analysis, analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.inlay_hints import inlay_hints
from wgmma_lsp.spans import Span

ROOT = Path(__file__).parent
SOURCES = sorted((ROOT / "fixtures").rglob("*.py")) + [ROOT.parent / "examples" / "seed_errors.py"]


def exercise(source: str) -> Analysis:
    analysis = analyze(source, "mutant.py")
    diagnostics(analysis)
    n = max(1, source.count("\n"))
    for line in range(0, n, 7):
        hover(analysis, line, 4)
    inlay_hints(analysis, Span(0, 0, n, 0))
    return analysis


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_every_prefix_of_a_kernel(path: Path) -> None:
    """What an editor sends while the file is being typed: every prefix, cut mid-line too."""
    source = path.read_text()
    step = max(1, len(source) // 30)
    for cut in range(0, len(source), step):
        exercise(source[:cut])


@pytest.mark.parametrize("path", SOURCES[:8], ids=lambda p: p.stem)
def test_random_mutations(path: Path) -> None:
    rng = random.Random(path.name)
    source = path.read_text()
    junk = ["(", ")", "[", ":", "def ", "lambda", "'", '"""', "\\", "*", "@", "...", "\t", "é", "\x00"]
    for _ in range(25):
        chars = list(source)
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(chars))
            if rng.random() < 0.5:
                del chars[i]
            else:
                chars.insert(i, rng.choice(junk))
        exercise("".join(chars))


def test_broken_line_keeps_the_rest() -> None:
    source = (ROOT.parent / "examples" / "seed_errors.py").read_text()
    broken = source.replace("    half = acc_ref[...].astype(jnp.bfloat16) * 0.5",
                            "    half = acc_ref[...].astype(jnp.bfloat16) * (")
    codes = {d.code for d in diagnostics(analyze(broken))}
    assert {"WG002", "WG003"} <= codes  # the kernels below the half-typed line still get theirs


@pytest.mark.parametrize("text", [
    "", "\n\n", "\ufeffimport jax\n", "x = 1\r\ny = 2\r\n", "x = 1\ry = 2\r", "\x00\x00",
    "def f(:\n", "if True:\n", "é = 'ü'\n" * 3, "(" * 200, "[" * 5000, "x = " + "1 + " * 3000 + "1\n",
])
def test_odd_text(text: str) -> None:
    exercise(text)


def test_deep_recursion_and_huge_files() -> None:
    recursive = "def f(x):\n  return f(x)\n\nf(1)\n" + "def g(n):\n  return g(n - 1) if n else 0\ng(10)\n"
    exercise(recursive)
    body = (ROOT.parent / "examples" / "seed_errors.py").read_text()
    huge = "\n".join(body.replace("_kernel(", f"_kernel_{i}(").replace("def matmul", f"def matmul_{i}")
                     for i in range(60))
    analysis = exercise(huge)
    assert len(analysis.source.splitlines()) > 4000


def test_hover_shows_views_and_transforms() -> None:
    source = '''
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
def kernel(a_ref):
  def body(s_ref):
    x = s_ref.at[0]
    y = x.transpose((1, 0))  # (plgpu.transpose_ref is gone in JAX 0.12.1)
  transforms = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))
  pl.run_scoped(body, plgpu.SMEM((2, 64, 128), jnp.bfloat16, transforms=transforms))
'''
    analysis = analyze(source)
    x = hover(analysis, 6, 5).markdown
    assert "`Ref<smem>{bfloat16[64,128]} (view of Ref<smem>{bfloat16[2,64,128]} through at[...])`" in x
    assert "transforms: tiling (8, 64), swizzle 128" in x
    y = hover(analysis, 7, 5).markdown
    assert "Ref<smem>{bfloat16[128,64]}" in y and "transpose (1, 0)" in y

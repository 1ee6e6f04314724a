"""Shared memory per kernel (WG032 and the hover on pallas_call / plgpu.kernel), checked against
the number JAX's Mosaic GPU lowering computes: with its SMEM bound patched to 0, JAX reports
`smem_bytes=...` for every kernel, which must be the analyzer's total."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jax_oracle import expectations, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.rules.base import KERNEL_LEVEL_NOTE

LOWERING = Path(__file__).parent / "fixtures" / "lowering"
CLEAN = [p for p in sorted(LOWERING.glob("*.py")) if not expectations(p.read_text())]
# `plgpu.kernel` fixtures whose kernels allocate SMEM (pipelines, scratch): lowered by every
# supported JAX.
KERNEL_FIXTURES = sorted(p for p in (Path(__file__).parent / "fixtures" / "lowering_kernel").glob("*.py")
                         if "smem_budget" in p.name)
# Kernels that only size shared memory: JAX's budget check comes before it lowers their bodies
# (some of which it then rejects for reasons of their own: a reduction's layout, say).
SMEM_FIXTURES = sorted((Path(__file__).parent / "fixtures" / "smem_budget").glob("*.py"))

lane_jax = pytest.mark.skipif(installed() is None or installed()[:2] != (0, 10),
                              reason="JAX 0.10 lowers these pl.pallas_call kernels with Mosaic GPU")


def jax_smem_bytes(path: Path) -> set[int]:
    from jax.experimental.mosaic.gpu import core as mgpu_core

    saved = mgpu_core._SMEM_SIZE_BOUND
    mgpu_core._SMEM_SIZE_BOUND = 0
    try:
        verdicts = trace_file(path, lower=True)
    finally:
        mgpu_core._SMEM_SIZE_BOUND = saved
    out = set()
    for v in verdicts:
        m = re.search(r"smem_bytes=(\d+) > max_smem_bytes=0", v.message or "")
        assert m, v
        out.add(int(m.group(1)))
    return out


@lane_jax
@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_smem_total_is_jaxs(path: Path) -> None:
    analysis = analyze(path.read_text(), str(path))
    ours = {u.smem_bytes for usages in analysis.smem.values() for u in usages if u.complete}
    assert ours, "every lowering fixture's kernel is sized"
    assert ours == jax_smem_bytes(path)


def test_a_helper_shared_by_two_kernels_allocates_in_each() -> None:
    """A helper's `pl.run_scoped` counts in every kernel that calls it: the second call is not a
    memo replay that would leave its allocation out (the second kernel's WG032 was lost so)."""
    path = Path(__file__).parent / "fixtures" / "smem_budget" / "shared_helper.py"
    source = path.read_text()
    findings = analyze(source, str(path)).findings
    assert {(f.span.line + 1, f.rule.code, f.message) for f in findings} == expectations(source)
    assert len(findings) == 1


def test_pipeline_fixtures_are_among_the_kernel_fixtures() -> None:
    assert sum("emit_pipeline" in p.name for p in KERNEL_FIXTURES) >= 3


@pytest.mark.parametrize("path", KERNEL_FIXTURES + SMEM_FIXTURES, ids=lambda p: p.stem)
def test_kernel_smem_total_is_jaxs(path: Path) -> None:
    """`plgpu.kernel` kernels (emit_pipeline buffers x stages, their barriers, the kernel's own
    scratch): the analyzer's total is exactly JAX's `smem_bytes`, on the installed JAX."""
    analysis = analyze(path.read_text(), str(path))
    usages = [u for us in analysis.smem.values() for u in us]
    assert usages and all(u.complete for u in usages)
    assert {u.smem_bytes for u in usages} == jax_smem_bytes(path)


@lane_jax
def test_hover_on_the_kernel_call_shows_its_shared_memory() -> None:
    path = LOWERING / "smem_budget_scopes_warpgroup.py"
    source = path.read_text()
    line = next(i for i, ln in enumerate(source.splitlines()) if "plgpu.kernel(" in ln)
    info = hover(analyze(source, str(path)), line, source.splitlines()[line].index("kernel"))
    assert info is not None
    assert "Shared memory: 196,640 bytes of 232,448 (sm_90)" in info.markdown
    assert "plgpu.SMEM(float32[128,128]): 65,536 B" in info.markdown


LOWER_BOUND = '''
import os
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

N = int(os.environ["N"])  # not known before the program runs


def kernel(o_gmem):
  def body(big_smem, unsized_smem):
    o_gmem[...] = big_smem[:128, :128]

  pl.run_scoped(body, plgpu.SMEM((256, 256), jnp.float32), plgpu.SMEM((N, 128), jnp.float32))


def f():
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32))()

# wgmma-lsp: trace f()
'''


def test_a_lower_bound_over_the_limit_is_worded_as_ours_not_jaxs() -> None:
    """One allocation cannot be sized: the total (262,144 bytes of the other) is only a lower
    bound of JAX's smem_bytes, so the finding says "at least" and does not print JAX's message
    with a number JAX would not print; the hover says "at least" too."""
    analysis = analyze(LOWER_BOUND, "lower_bound.py")
    findings = [f for f in analysis.findings if f.rule.code == "WG032"]
    assert len(findings) == 1
    message = findings[0].message
    assert message.startswith("This kernel allocates at least 262,144 bytes of shared memory")
    assert "smem_bytes=" not in message
    # The kernel-level note first (blamed at the launch, as JAX's traceback), then the allocations.
    assert [r.message for r in findings[0].related][:1] == [KERNEL_LEVEL_NOTE]
    assert "plgpu.SMEM(float32[256,256])" in findings[0].related[1].message
    lines = LOWER_BOUND.splitlines()
    line = next(i for i, ln in enumerate(lines) if "plgpu.kernel(" in ln)
    info = hover(analysis, line, lines[line].index("kernel("))
    assert info is not None and "Shared memory: at least 262,144 bytes of 232,448" in info.markdown


@lane_jax
def test_hover_on_a_block_without_memory_space_says_it_is_lowered_in_smem() -> None:
    """A `pallas_call` BlockSpec with no `memory_space`: JAX traces the block as `Ref<default>`
    and lowers the kernel over the pipeline's SMEM buffer; the hover says both."""
    path = LOWERING / "wgmma_swizzle_mismatch_default_space_lane.py"
    source = path.read_text()
    lines = source.splitlines()
    line = next(i for i, ln in enumerate(lines) if "plgpu.wgmma(" in ln)
    info = hover(analyze(source, str(path)), line, lines[line].index("a_ref"))
    assert info is not None
    assert "Ref<default>{bfloat16[64,64]}" in info.markdown
    assert "lowered in SMEM" in info.markdown


@lane_jax
def test_an_operand_error_relates_to_the_operands_blockspec_not_the_accumulator() -> None:
    """WG022 on a rhs whose BlockSpec gave it swizzle 64: the related location is that BlockSpec."""
    path = LOWERING / "wgmma_swizzle_mismatch_default_space_lane.py"
    source = path.read_text()
    findings = [f for f in analyze(source, str(path)).findings if f.rule.code == "WG022"]
    assert len(findings) == 1
    rhs_spec_line = next(i for i, ln in enumerate(source.splitlines()) if "transforms=RHS" in ln)
    assert [r.span.line for r in findings[0].related] == [rhs_spec_line]
    assert "pallas_call input 1" in findings[0].related[0].message


def test_shipped_kernels_smem_totals_against_jaxs_lowering(tmp_path: Path) -> None:
    """The kernels shipped in the installed jax, at the harness's configs (tests/shipped_harness.py),
    lowered by JAX with the SMEM bound at 0: each `smem_bytes` JAX reports is one of the
    analyzer's exact totals for that file (warp-specialized pipelines with and without
    `allocations=`, dynamic scheduling loops, reductions' scratch: all sized), and no total the
    analyzer marks as a lower bound exceeds JAX's largest for the file."""
    from jax.experimental.mosaic.gpu import core as mgpu_core
    from shipped_harness import ENTRIES, shipped_kernel_files, trace_entries, with_harness

    exact, not_exact, bounds_above = [], [], []
    for path in shipped_kernel_files():
        if path.name not in ENTRIES:
            continue
        out = tmp_path / path.name
        out.write_text(with_harness(path.read_text(), path.name))
        saved, mgpu_core._SMEM_SIZE_BOUND = mgpu_core._SMEM_SIZE_BOUND, 0
        try:
            verdicts = trace_entries(out, lower=True)
        finally:
            mgpu_core._SMEM_SIZE_BOUND = saved
        jax_bytes = {int(m.group(1)) for v in verdicts
                     if (m := re.search(r"smem_bytes=(\d+) > max_smem_bytes=0", v.message or ""))}
        usages = [u for us in analyze(out.read_text(), str(out)).smem.values() for u in us]
        ours = {u.smem_bytes for u in usages if u.complete}
        for j in sorted(jax_bytes):
            (exact if j in ours else not_exact).append((path.name, j))
        if jax_bytes:
            bounds_above += [(path.name, u.smem_bytes) for u in usages
                             if not u.complete and u.smem_bytes > max(jax_bytes)]
    assert not_exact == [], "JAX's totals the analyzer does not size exactly"
    assert bounds_above == [], "lower bounds above JAX's totals"
    assert len(exact) >= 8, exact


def test_a_barrier_field_not_known_keeps_a_total_exact_unless_siblings_may_share_its_kind() -> None:
    """Barriers are counted by kind (`Resources.barrier_counts`): a scope's barriers add up
    whatever their arrival count, so one not known (None) changes no total — until a sibling
    scope's barriers are merged with them (the larger count of each kind): then whether the two
    are one kind decides the total, and it is only a lower bound. Cluster barriers whose
    collective axes are not known are such a case among themselves."""
    from collections import Counter

    from wgmma_lsp.models.smem_budget import merge_barriers

    known, other = ("barrier", 1, 2, False, ()), ("barrier", 2, 2, False, ())
    unknown = ("barrier", None, 2, False, ())
    assert merge_barriers(Counter(), Counter([unknown])) == (Counter([unknown]), True)
    assert merge_barriers(Counter([known]), Counter([known])) == (Counter([known]), True)
    assert merge_barriers(Counter([known]), Counter([other])) == (Counter([known, other]), True)
    assert merge_barriers(Counter([known]), Counter([unknown]))[1] is False
    assert merge_barriers(Counter([unknown]), Counter([unknown]))[1] is False
    assert merge_barriers(Counter([known]), Counter([("barrier", None, 4, False, ())]))[1] is True
    cluster = ("cluster_barrier", 1, 2, False, None)
    assert merge_barriers(Counter([cluster]), Counter([known]))[1] is True
    assert merge_barriers(Counter([cluster]), Counter([cluster]))[1] is False

"""Traced avals on hover and inlay hints equal the avals of the jaxpr JAX builds itself."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from wgmma_lsp.trace.report import hover_lines_for, inlay_labels_for, traced_avals
from wgmma_lsp.trace.runner import TraceOutcome

from .conftest import FIXTURES

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _import_fixture(path: Path):  # the *test* process may import fixtures; the server never does
    spec = importlib.util.spec_from_file_location("lowering_kernels_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _jaxpr_avals(closed, path: str) -> set[tuple[int, str, tuple[str, ...]]]:
    """(0-based line, primitive, output avals) of every equation the file bound, at any depth."""
    out = set()
    stack = [closed.jaxpr]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            lines = [f.line_num for f in eqn.source_info.traceback.frames if f.file_name == path]
            if lines and eqn.outvars:
                out.add((lines[0] - 1, str(eqn.primitive), tuple(str(v.aval) for v in eqn.outvars)))
            for v in eqn.params.values():
                for sub in (v if isinstance(v, (list, tuple)) else [v]):
                    if hasattr(sub, "eqns"):
                        stack.append(sub)
                    elif hasattr(getattr(sub, "jaxpr", None), "eqns"):
                        stack.append(sub.jaxpr)
    return out


@pytest.fixture(scope="module")
def expected() -> dict[tuple[tuple[int, int], tuple[int, int]], set]:
    path = FIXTURES / "lowering_kernels.py"
    module = _import_fixture(path)
    out = {}
    for a, b in [((64, 64), (64, 128)), ((128, 64), (64, 256))]:
        specs = (jax.ShapeDtypeStruct(a, jnp.bfloat16), jax.ShapeDtypeStruct(b, jnp.bfloat16))
        out[(a, b)] = _jaxpr_avals(jax.make_jaxpr(module.matmul)(*specs), str(path))
    return out


def test_traced_avals_equal_the_jaxpr(lowering_outcome: TraceOutcome, expected) -> None:
    avals = traced_avals(lowering_outcome)
    entries = lowering_outcome.request.entries
    for idx, key in [(0, ((64, 64), (64, 128))), (1, ((128, 64), (64, 256)))]:
        got = {(a.span.line, a.primitive, a.avals) for a in avals if a.entry == entries[idx]}
        assert got == expected[key]
        assert any("float32" in " ".join(v) for _, _, v in got)


def _find(path: Path, needle: str) -> tuple[int, int]:
    for i, line in enumerate(path.read_text().splitlines()):
        if needle in line:
            return i, line.index(needle)
    raise AssertionError(needle)


def test_hover_shows_traced_avals_for_each_entry_point(lowering_outcome: TraceOutcome, expected) -> None:
    avals = traced_avals(lowering_outcome)
    line, col = _find(FIXTURES / "lowering_kernels.py", "acc_ref[...]")
    lines = hover_lines_for(avals, line, col + 2)
    want = {a for exp in expected.values() for (ln, prim, a) in exp
            if ln == line and prim.startswith("wgmma_accumulator_deref")}
    assert want == {("float32[64,128]",), ("float32[128,256]",)}
    assert len(lines) == 2
    assert any("`float32[64,128]`" in s and s.startswith("traced (matmul(bf16[64,64]") for s in lines)
    assert any("`float32[128,256]`" in s for s in lines)


def test_hover_picks_the_innermost_expression(lowering_outcome: TraceOutcome) -> None:
    avals = traced_avals(lowering_outcome)
    line, col = _find(FIXTURES / "lowering_kernels.py", "acc.astype(o_ref.dtype)")
    assert any("`bfloat16[64,128]`" in s for s in hover_lines_for(avals, line, col + 5))
    assert hover_lines_for(avals, line, 0) == []  # indentation: no expression there


def test_inlay_hint_at_the_end_of_the_outermost_expression(lowering_outcome: TraceOutcome) -> None:
    avals = traced_avals(lowering_outcome)
    line, col = _find(FIXTURES / "lowering_kernels.py", "acc.astype(o_ref.dtype)")
    [(at, label)] = inlay_labels_for(avals, line)
    assert at == col + len("acc.astype(o_ref.dtype)")
    assert label == " traced bfloat16[64,128] | bfloat16[128,256]"

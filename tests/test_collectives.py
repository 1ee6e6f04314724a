"""Collective kernels' idioms against real JAX: `pl.get_global` semaphores, `plgpu.remote_ref`,
the machine's device count and the mesh's axis sizes.

The fixture (`fixtures/clean/collective_refs.py`) is traced by JAX on the CPU; every ref and
array name JAX saw in it must show the same aval in the analyzer's hover, with the symbol
`jax.device_count()` read as the count JAX ran with (sizes built from it stay symbolic in the
analyzer: the machine is not known without running)."""

from __future__ import annotations

import re
from pathlib import Path

from shipped_harness import runtime_arrays
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.values import ArrayVal, RefVal, SymInt

FIXTURE = Path(__file__).parent / "fixtures" / "clean" / "collective_refs.py"


def _concrete(shape, machine: dict[str, int]) -> tuple[int, ...] | None:
    out = []
    for d in shape:
        if isinstance(d, D.Sym):
            if any(name not in machine for name, _ in d.terms):
                return None
            d = sum(machine[name] * coef for name, coef in d.terms) + d.const
        out.append(d)
    return tuple(out)


def _aval(v, machine: dict[str, int]) -> str | None:
    """The aval JAX prints for a value the analyzer holds (a ref: its un-transformed ref)."""
    root = v.root() if isinstance(v, RefVal) else v
    inner = root.inner if isinstance(root, RefVal) else root
    if not isinstance(inner, ArrayVal) or inner.shape is None:
        return None
    shape = _concrete(inner.shape, machine)
    if shape is None:
        return None
    text = f"{inner.dtype}[{','.join(map(str, shape))}]"
    return f"Ref<{root.space}>{{{text}}}" if isinstance(root, RefVal) else text


def _jax_aval(text: str) -> str:
    """`Ref<gmem>{float16[2,256,64]}` of a plain ref, or of the ref a TransformedRef views."""
    m = re.search(r"JitTracer\(([^()]*)\)", text)
    return (m.group(1) if m else text).lstrip("~")


def _values(analysis, name: str):
    return [v for r in analysis.records.values() if r.name == name for v in r.values]


def test_collective_idioms_show_what_jax_traces() -> None:
    import jax

    runtime = runtime_arrays(FIXTURE.resolve())
    seen = {name: aval for (_, name), aval in runtime.arrays.items() if name != "_"}
    assert {"sem", "sems", "remote", "remote_rows", "scratch_ref", "unused"} <= set(seen)
    analysis = analyze(FIXTURE.read_text(), str(FIXTURE))
    assert [d for d in diagnostics(analysis)] == []
    machine = {"jax.device_count()": jax.device_count()}
    for name, aval in seen.items():
        ours = {_aval(v, machine) for v in _values(analysis, name) if isinstance(v, (ArrayVal, RefVal))}
        assert ours == {_jax_aval(aval)}, (name, ours, aval)


def test_remote_ref_is_the_same_ref_on_another_device() -> None:
    """`remote_ref`'s PeerMemRef transform keeps shape, dtype and memory space; views of it
    index like views of the ref itself."""
    analysis = analyze(FIXTURE.read_text(), str(FIXTURE))
    remotes, rows = _values(analysis, "remote"), _values(analysis, "remote_rows")
    assert remotes and rows  # one per context (the entry point's, the symbolic pass's)
    for remote in remotes:
        assert isinstance(remote, RefVal) and remote.base is not None
        assert remote.shape == remote.root().shape and remote.dtype == remote.root().dtype
        assert remote.space == "gmem" and "remote_ref" in remote.describe()
    for view in rows:
        assert view.shape == view.root().shape[1:]


def test_device_counts_are_one_symbol_per_program() -> None:
    """Every `jax.device_count()` and `len(jax.devices())` is the same unknown number: sizes
    built from it compare equal; `jax.local_device_count()` is another."""
    analysis = analyze("""
import jax
a = jax.device_count()
b = len(jax.devices())
c = jax.local_device_count()
same = a == b
differ = a == c
""")
    got = {r.name: r.values for r in analysis.records.values() if r.name in ("a", "b", "c", "same", "differ")}
    assert got["a"] == got["b"] and isinstance(got["a"][0], SymInt)
    assert got["c"] != got["a"]
    assert [v.value for v in got["same"]] == [True]
    assert all(not hasattr(v, "value") for v in got["differ"])  # undecided


def test_get_global_of_something_unknown_stays_unknown() -> None:
    analysis = analyze("""
from jax.experimental import pallas as pl
def body(what):
  ref = pl.get_global(what)
""")
    assert all(not isinstance(v, RefVal) for v in _values(analysis, "ref"))

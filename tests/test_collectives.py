"""Collective kernels' idioms against real JAX: `pl.get_global` semaphores, `plgpu.remote_ref`,
the machine's device count and the mesh's axis sizes.

The fixture (`fixtures/clean/collective_refs.py`) is traced by JAX on the CPU; every ref and
array name JAX saw in it must show the same aval in the analyzer's hover, with the symbol
`jax.device_count()` read as the count JAX ran with (sizes built from it stay symbolic in the
analyzer: the machine is not known without running)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from jax_oracle import trace_file
from shipped_harness import runtime_arrays
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.values import ArrayVal, RefVal, SymInt

FIXTURE = Path(__file__).parent / "fixtures" / "clean" / "collective_refs.py"
MESH_FIXTURE = Path(__file__).parent / "fixtures" / "clean" / "collective_mesh.py"


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


def _traced_avals(path: Path) -> dict[tuple[str, str], str]:
    """(function, local name) -> the aval JAX gave it while `trace_file` ran the file's entry
    points (its `__main__` block included); every entry must trace cleanly."""
    import jax
    from jax._src.state.types import TransformedRef

    target = str(path)
    seen: dict[tuple[str, str], str] = {}

    def local(frame, event, arg):
        for name, v in frame.f_locals.items():
            if isinstance(v, (jax.core.Tracer, TransformedRef)):
                seen.setdefault((frame.f_code.co_name, name), str(v if isinstance(v, TransformedRef) else v.aval))
        return local

    old = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local if frame.f_code.co_filename == target else None)
    try:
        verdicts = trace_file(path)
    finally:
        sys.settrace(old)
    assert verdicts and all(v.message is None for v in verdicts), verdicts
    return seen


def test_shard_map_splits_over_the_mesh_set_and_inferred() -> None:
    """`jax.set_mesh` + `reshard` + `in_specs` inferred, and an explicit `in_specs`: the shards'
    avals inside the kernel are JAX's (global size / axis size, with the axis size
    `jax.device_count()`)."""
    import jax

    seen = _traced_avals(MESH_FIXTURE.resolve())
    assert {("body", "a_ref"), ("body", "out_ref"), ("local_matmul", "a")} <= set(seen)
    analysis = analyze(MESH_FIXTURE.read_text(), str(MESH_FIXTURE))
    assert diagnostics(analysis) == []
    machine = {"jax.device_count()": jax.device_count()}
    for (fn, name), aval in seen.items():
        if fn == "run":
            continue  # the global arrays: symbolic (`64*jax.device_count()`), checked below
        values = [v for r in analysis.records.values() if r.name == name
                  for v, ctx in zip(r.values, r.contexts) if ctx is not None]  # not the symbolic pass
        ours = {_aval(v, machine) for v in values if isinstance(v, (ArrayVal, RefVal))}
        assert ours == {_jax_aval(aval)}, (name, ours, aval)
    axis = [v for r in analysis.records.values() if r.name == "axis_size" for v in r.values]
    assert any(isinstance(v, SymInt) and v.dim == D.Sym.var("jax.device_count()") for v in axis)


def test_split_dimensions_divide_exactly_or_stay_unknown() -> None:
    from wgmma_lsp.models.meshes import exact_div

    n = D.Sym.var("jax.device_count()")
    assert exact_div(512, 4) == 128 and exact_div(512, 3) is None
    assert exact_div(D.mul(n, 1024), n) == 1024
    assert exact_div(D.add(D.mul(n, 64), 1), n) is None  # 64*n + 1 is not a multiple of n
    # not in terms of n: shard_map requires n to divide it; the shard is the named quotient
    assert str(exact_div(16384, n)) == "16384 // jax.device_count()"
    assert exact_div(D.mul(n, 8), 4) == D.mul(n, 2)


def test_a_mesh_over_all_devices_has_the_device_count() -> None:
    from wgmma_lsp.models.meshes import mesh_axes

    analysis = analyze("""
import jax
from jax.experimental import mesh_utils
same = jax.sharding.Mesh(jax.devices(), ("y",))
grid = jax.sharding.Mesh(mesh_utils.create_device_mesh((2, 4)), ("a", "b"))
made = jax.make_mesh((jax.device_count(),), ("x",))
""")
    got = {r.name: mesh_axes(r.values[0]) for r in analysis.records.values() if r.name in ("same", "grid", "made")}
    n = D.Sym.var("jax.device_count()")
    assert got == {"same": {"y": n}, "grid": {"a": 2, "b": 4}, "made": {"x": n}}


_GUARDED = """
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
P = jax.sharding.PartitionSpec

def kernel(o_ref):
  o_ref[...] = jnp.zeros((8, 128), jnp.float32)

def f(n):
  if {test}:
    raise ValueError("wrong machine")
  seen = {seen}
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((8, 128), jnp.float16), grid=(1,),
                      grid_names=("b",))()

def run():
  return jax.shard_map(lambda: f(4), mesh=jax.make_mesh((1,), ("x",)), in_specs=(),
                       out_specs=P(), check_vma=False)()

if __name__ == "__main__":
  run()
"""


def _severities_and_seen(test: str, seen: str):
    from wgmma_lsp.ide.model import Severity

    analysis = analyze(_GUARDED.format(test=test, seen=seen))
    sev = {d.severity for d in diagnostics(analysis) if d.code == "WG057"}
    values = [v for r in analysis.records.values() if r.name == "seen" for v in r.values]
    return sev == {Severity.ERROR}, sev == {Severity.WARNING}, values


def test_a_guard_on_the_machine_is_taken_to_pass_and_narrows() -> None:
    error, _, seen = _severities_and_seen(
        "(num_devices := jax.device_count()) != lax.axis_size('x')", "num_devices")
    assert error  # analysed for the machines it runs on
    assert [getattr(v, "value", None) for v in seen] == [1]  # == the mesh's axis size


def test_a_guard_on_anything_else_keeps_the_rest_possible() -> None:
    _, warning, _ = _severities_and_seen("hash(n) != jax.device_count()", "n")  # hash(n): unknown
    assert warning
    _, warning, _ = _severities_and_seen("jax.device_count() > 1 and hash(n) > 2", "n")
    assert warning
    error, _, _ = _severities_and_seen("jax.device_count() > 1 and n > 2", "n")  # n is 4: known
    assert error


def test_an_assert_that_fails_ends_the_path() -> None:
    """`assert b.dtype == dtype` with different dtypes raises (JAX's AssertionError): nothing
    after it is reported, since nothing after it runs."""
    analysis = analyze("""
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def kernel(a_ref, o_ref):
  assert a_ref.dtype == jnp.float32
  o_ref[...] = jnp.zeros((64, 64), jnp.float32)

def main():
  import jax
  pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((64, 64), jnp.float16))(
      jnp.zeros((64, 64), jnp.float16))

if __name__ == "__main__":
  main()
""")
    assert [d.code for d in diagnostics(analysis)] == []
    same = analyze("import jax.numpy as jnp\nx = jnp.dtype(jnp.float16) == jnp.float16\n"
                   "y = jnp.zeros((2,), jnp.float16).dtype != jnp.float32\n")
    got = {r.name: [getattr(v, "value", None) for v in r.values] for r in same.records.values()
           if r.name in ("x", "y")}
    assert got == {"x": [True], "y": [True]}


def test_a_callback_from_another_module_records_its_parameters_in_its_own_file(tmp_path: Path) -> None:
    """`hopper_matmul_mgpu.kernel(..., pipeline_callback=partial(send_lhs, ...))` calls back into
    the analysed file: `send_lhs`'s parameters show what it got; the other module's own
    parameters leave no values at positions of the analysed file."""
    from wgmma_lsp.program import Program

    (tmp_path / "runner.py").write_text(
        "import jax.numpy as jnp\n\n"
        "def run(callback, n):\n"
        "  x = jnp.zeros((n, 8), jnp.float16)\n"
        "  callback(x, jnp.int32(n))\n")
    main = tmp_path / "main.py"
    main.write_text(
        "import functools\nfrom runner import run\n\n"
        "def on_tile(tile, idx, scale):\n"
        "  del idx\n"
        "  return tile\n\n"
        "def go():\n"
        "  run(functools.partial(on_tile, scale=2), 64)\n\n"
        "if __name__ == '__main__':\n  go()\n")
    analysis = analyze(main.read_text(), str(main), program=Program())
    shown = {(r.span.line, r.name): [v.describe() for v in r.values] for r in analysis.records.values()
             if r.kind == "name"}
    assert shown[(3, "tile")] == ["float16[64,8]"]
    assert shown[(3, "idx")] == ["int32[]"] and shown[(4, "idx")] == ["int32[]"]  # `del idx` too
    assert shown[(3, "scale")] == ["2"]
    # runner.run's parameters (line 2 of runner.py) are not recorded at line 2 of main.py
    assert not any(line == 2 and name in ("callback", "n") for line, name in shown)


def test_coverage_counts_a_python_number_only_beside_a_known_array() -> None:
    """`device_step(ref, 0)` then `device_step(ref, i)` in a `pl.loop`: the name holds a plain
    number in one call and a traced array in the other; both are known. A name the analyzer only
    ever saw as a number, where JAX saw an array, is not covered."""
    import ast

    from wgmma_lsp.ide.coverage import first_line, hover_coverage, kernel_body_functions

    source = """
import jax.numpy as jnp
from jax.experimental import pallas as pl

def kernel(o_ref):
  def step(i):
    j = i
    k = 3
  step(0)
  @pl.loop(0, 4)
  def _(i):
    step(i)
"""
    tree = ast.parse(source)
    step = next(f for f in kernel_body_functions(tree) if getattr(f, "name", "") == "step")
    runtime = {(first_line(step), "j"): "int32[]", (first_line(step), "k"): "int32[]"}
    cov = hover_coverage(analyze(source), tree, runtime)
    got = {n.name: (n.covered, n.shown) for n in cov.names}
    assert got["j"][0] is True and got["j"][1] == ["int32[]"]
    assert got["k"][0] is False

"""WG215 (threads of different roles on the same SMEM) and WG216 (copies out over the same GMEM):
what the analysis does not claim, next to the same kernel it does claim. The fixture pairs
(tests/fixtures/races/*/roles_*.py, copies_out_*.py) are judged by JAX's detector in
tests/test_races.py; these variants only check that a kernel the analysis cannot prove racy
gets no warning, and that a fix is offered only where it cannot deadlock."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics

RACES = Path(__file__).parent / "fixtures" / "races"


def _warnings(source: str, name: str) -> list:
    path = RACES / "racy" / f"{name}.py"
    return [d for d in diagnostics(analyze(source, str(path))) if d.code in ("WG215", "WG216")]


def _racy(name: str) -> str:
    return (RACES / "racy" / f"{name}.py").read_text()


def test_an_access_under_a_traced_condition_proves_nothing() -> None:
    source = _racy("roles_read_before_wait")
    assert [d.code for d in _warnings(source, "roles_read_before_wait")] == ["WG215"]
    maybe = source.replace("    out[...] = smem[...] + 1.0  # R: WG215\n",
                           "    @pl.when(x_ref[0, 0] > 0)\n    def _():\n      out[...] = smem[...] + 1.0\n")
    assert maybe != source
    assert _warnings(maybe, "roles_read_before_wait") == []


def test_a_wait_on_a_slot_the_log_does_not_know_silences_it() -> None:
    """The producer arrives on slot 0 of a barrier array; the consumer waits, before reading, on a
    slot picked by a traced value: it may be slot 0."""
    source = _racy("roles_read_before_wait")
    unknown = source.replace("    out[...] = smem[...] + 1.0  # R: WG215\n",
                             "    plgpu.barrier_wait(bars.at[x_ref[0, 0].astype(jnp.int32)])\n"
                             "    out[...] = smem[...] + 1.0\n")
    unknown = unknown.replace("    plgpu.barrier_arrive(bar)\n", "    plgpu.barrier_arrive(bars.at[0])\n")
    unknown = unknown.replace("def body(x_ref, o_ref, smem, out, bar):", "def body(x_ref, o_ref, smem, out, bar, bars):")
    unknown = unknown.replace("plgpu.Barrier(num_arrivals=1)]", "plgpu.Barrier(num_arrivals=1),\n"
                              "                                     plgpu.Barrier(num_arrivals=1, num_barriers=2)]")
    assert "bars.at[x_ref" in unknown and "bars.at[0]" in unknown and "num_barriers=2" in unknown
    assert _warnings(unknown, "roles_read_before_wait") == []
    known = unknown.replace("bars.at[x_ref[0, 0].astype(jnp.int32)]", "bars.at[1]")
    assert [d.code for d in _warnings(known, "roles_read_before_wait")] == ["WG215"]


def test_disjoint_rows_of_two_threads_do_not_race() -> None:
    source = _racy("roles_write_same_rows")
    assert _warnings(source, "roles_write_same_rows")
    apart = source.replace("smem[16:64, :] = jnp.full((48, 32)", "smem[48:64, :] = jnp.full((16, 32)")
    assert apart != source
    assert _warnings(apart, "roles_write_same_rows") == []


def test_no_fix_moves_a_wait_whose_arrival_waits_for_the_thread() -> None:
    """Thread 0 arrives on `bar` only after waiting on `done`, which thread 1 arrives on after its
    read: moving thread 1's wait on `bar` above the read would deadlock. The race is still there;
    the fix offered orders the pair the other way (thread 0 waits on `done` before writing)."""
    source = _racy("roles_read_before_wait")
    cyclic = source.replace(
        "    smem[...] = jnp.full(SHAPE, 1.0, jnp.float32)\n    plgpu.barrier_arrive(bar)\n",
        "    smem[...] = jnp.full(SHAPE, 1.0, jnp.float32)\n    plgpu.barrier_wait(done)\n    plgpu.barrier_arrive(bar)\n")
    cyclic = cyclic.replace("    out[...] = smem[...] + 1.0  # R: WG215\n",
                            "    out[...] = smem[...] + 1.0  # R: WG215\n    plgpu.barrier_arrive(done)\n")
    cyclic = cyclic.replace("def body(x_ref, o_ref, smem, out, bar):", "def body(x_ref, o_ref, smem, out, bar, done):")
    cyclic = cyclic.replace("plgpu.Barrier(num_arrivals=1)]", "plgpu.Barrier(num_arrivals=1), plgpu.Barrier(num_arrivals=1)]")
    assert cyclic.count("done") == 3
    found = _warnings(cyclic, "roles_read_before_wait")
    assert [d.code for d in found] == ["WG215"]
    edits = [e.new_text.strip() for f in found[0].fixes for e in f.edits if e.new_text]
    assert edits == ["plgpu.barrier_wait(done)"]
    assert found[0].span.line + 1 == cyclic.splitlines().index("    smem[...] = jnp.full(SHAPE, 1.0, jnp.float32)") + 1
    assert [f.title for d in _warnings(source, "roles_read_before_wait") for f in d.fixes] == \
        ["Move the wait up, before the access"]


def test_copies_out_from_two_threads_ordered_by_a_barrier_do_not_race() -> None:
    """Thread 0 waits for its copy's writes, then arrives; thread 1 waits before its copy."""
    source = _racy("roles_copy_overlapping_gmem")
    assert [d.code for d in _warnings(source, "roles_copy_overlapping_gmem")] == ["WG216"]
    ordered = source.replace("    plgpu.copy_smem_to_gmem(a, o_ref.at[0:32])\n    plgpu.wait_smem_to_gmem(0)\n",
                             "    plgpu.copy_smem_to_gmem(a, o_ref.at[0:32])\n    plgpu.wait_smem_to_gmem(0)\n"
                             "    plgpu.barrier_arrive(bar)\n")
    ordered = ordered.replace("    b[...] = jnp.full((32, 32), 2.0, jnp.float32)\n",
                              "    plgpu.barrier_wait(bar)\n    b[...] = jnp.full((32, 32), 2.0, jnp.float32)\n")
    ordered = ordered.replace("def body(x_ref, o_ref, a, b):", "def body(x_ref, o_ref, a, b, bar):")
    ordered = ordered.replace("jnp.float32), plgpu.SMEM((32, 32), jnp.float32)]",
                              "jnp.float32), plgpu.SMEM((32, 32), jnp.float32),\n"
                              "                                     plgpu.Barrier(num_arrivals=1)]")
    assert ordered.count("(bar)") == 2 and "plgpu.Barrier(" in ordered
    assert _warnings(ordered, "roles_copy_overlapping_gmem") == []


def test_a_wait_of_unknown_count_between_two_copies_out_orders_them() -> None:
    source = _racy("copies_out_overlap")
    assert _warnings(source, "copies_out_overlap")
    unknown = source.replace("  plgpu.copy_smem_to_gmem(b, o_ref.at[16:48])  # R: WG216\n",
                             "  plgpu.wait_smem_to_gmem(x_ref.shape[0] // 64 - 1 + n)\n"
                             "  plgpu.copy_smem_to_gmem(b, o_ref.at[16:48])\n")
    unknown = unknown.replace("def body(x_ref, o_ref, a, b):", "def body(x_ref, o_ref, a, b, n=None):")
    assert "wait_smem_to_gmem(x_ref" in unknown
    assert _warnings(unknown, "copies_out_overlap") == []

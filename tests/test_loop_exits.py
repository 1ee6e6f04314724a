"""How a tuning loop's exits decide whether a finding in it is an error or a warning.

An error is reported only where it is proven on every path of a context. In a sweep (a loop over
known configurations in an entry point) the interpreter follows `break` and `continue` like
`return`: what follows one taken on some path may not run. A `try` catches a finding only when
one of its handlers names the exception's class and keeps its message (jax's tuning loops keep
"exceeds available shared memory" and re-raise the rest). The JAX-checked fixtures are
`fixtures/errors/entry_tuning_loop_exits.py` and `fixtures/clean/entry_tuning_loop_after_break.py`.
"""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity

FIXTURE = Path(__file__).parent / "fixtures" / "errors" / "entry_tuning_loop_exits.py"
FIRST = "lhs=(64, 64), rhs=b.shape=(64, 128), acc=(128, 64)"  # head_dim=64, block_kv=128


def severities(src: str) -> dict[str, Severity]:
    """The severity of the first configuration's WG005, and of head_dim=128's."""
    out = {}
    for d in diagnostics(analyze(src, "k.py")):
        if d.code == "WG005":
            out["first" if FIRST in d.message else "other"] = d.severity
    return out


def variant(old: str, new: str) -> str:
    src = FIXTURE.read_text()
    assert old in src, old
    return src.replace(old, new)


def test_the_fixture_as_written() -> None:
    assert severities(FIXTURE.read_text()) == {"first": Severity.ERROR, "other": Severity.WARNING}


def test_a_continue_on_a_decided_condition_is_followed_exactly() -> None:
    src = variant('if head_dim == 128 and "H100" not in jax.devices()[0].device_kind:',
                  "if head_dim == 256:")
    assert severities(src) == {"first": Severity.ERROR, "other": Severity.ERROR}


def test_a_handler_that_keeps_every_value_error_makes_it_a_warning() -> None:
    src = variant('        if "exceeds available shared memory" in e.args[0]:\n          continue\n'
                  '        raise\n', "        continue\n")
    assert severities(src)["first"] == Severity.WARNING


def test_a_handler_written_for_this_message_expects_it() -> None:
    # The loop skips configurations whose shapes JAX rejects, by that very message: the user's
    # code expects the error there (as jax's tuning loops expect shared-memory overflows), so
    # it is not reported for that configuration. The next one runs after it, proven too.
    src = variant('if "exceeds available shared memory" in e.args[0]:',
                  'if "Incompatible shapes" in str(e):')
    assert "first" not in severities(src)


def test_a_handler_for_another_message_of_the_same_class_does_not() -> None:
    src = variant('if "exceeds available shared memory" in e.args[0]:',
                  'if "Incompatible dtypes" in str(e) or "layout mismatch" in e.args[0]:')
    assert severities(src)["first"] == Severity.ERROR


def test_a_handler_that_re_raises_unless_the_message_matches() -> None:
    src = variant('        if "exceeds available shared memory" in e.args[0]:\n          continue\n'
                  '        raise\n',
                  '        if "exceeds available shared memory" not in str(e):\n          raise\n'
                  '        continue\n')
    assert severities(src)["first"] == Severity.ERROR


def test_a_break_before_the_call_leaves_every_iteration_uncertain_but_the_first() -> None:
    # The break is taken on some paths (the condition is unknown) before the kernel runs: the
    # first configuration may be skipped, and so may every later one.
    src = variant("      config = Config(block_q=64, block_kv=block_kv)\n",
                  "      if jax.devices()[0].device_kind == 'cpu':\n        break\n"
                  "      config = Config(block_q=64, block_kv=block_kv)\n")
    assert severities(src)["first"] == Severity.WARNING


def test_a_sweep_in_the_main_block_itself() -> None:
    # No function frame: the loop's own exits are followed the same way.
    src = FIXTURE.read_text()
    body = src[src.index("def main():\n") + len("def main():\n"):src.index('\n\nif __name__')]
    src = src[:src.index("def main():\n")] + 'if __name__ == "__main__":\n' + body + "\n"
    assert severities(src) == {"first": Severity.ERROR, "other": Severity.WARNING}


QK_ACC = "qk = pl.run_scoped(compute_qk, plgpu.ACC((block_q, block_kv), jnp.float32))"
#: The first configuration jax's attention_mgpu.py main() runs (batch 1, seq_len 4096, 16 heads,
#: head_dim 64, block_kv 256, schedule barrier, not causal), as a trace entry for real JAX.
ATTENTION_MAIN_FIRST = (
    "functools.partial(attention, config=TuningConfig(block_q=64, block_kv=256, "
    "max_concurrent_steps=2, use_schedule_barrier=True, causal=False))"
    "(f16[1,4096,16,64], f16[1,4096,16,64], f16[1,4096,16,64])")


def test_attention_main_proves_swapped_qk_accumulator_sizes(tmp_path: Path) -> None:
    """In jax's attention_mgpu.py, the QK accumulator allocated with its sizes swapped: JAX
    raises WG005 at the `wgmma` of `compute_qk` for main()'s first configuration (block_kv=256);
    the analysis of the file as written (its own main(), no harness) says so as an error. The
    next block size runs only if the first one failed on shared memory (the loop `break`s
    after the first that fits): a warning."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from shipped_harness import HARNESS_MARK, apply_shims, kernel_dir, trace_entries

    src = (kernel_dir() / "attention_mgpu.py").read_text()
    assert src.count(QK_ACC) == 2  # attention(), then attention_with_pipeline_emitter()
    planted = src.replace(QK_ACC, QK_ACC.replace("(block_q, block_kv)", "(block_kv, block_q)"), 1)

    harnessed = tmp_path / "attention_mgpu.py"
    harnessed.write_text(apply_shims(planted).rstrip("\n") + f"\n\n{HARNESS_MARK}\n"
                         f"# wgmma-lsp: trace {ATTENTION_MAIN_FIRST}\n")
    (jax_says,) = trace_entries(harnessed)
    assert jax_says.message == ("Incompatible shapes for matrix multiplication: lhs=(64, 64), "
                                "rhs=b.shape=(64, 256), acc=(256, 64)")

    diags = [d for d in diagnostics(analyze(planted, "attention_mgpu.py")) if d.code == "WG005"]
    first = [d for d in diags if d.span.line + 1 == jax_says.line]
    assert [(d.severity, strip_context_note(d.message)) for d in first
            if "acc=(256, 64)" in d.message] == [(Severity.ERROR, jax_says.message)]
    # Named by the context it is proven in: main()'s first configuration.
    assert [d for d in first if "acc=(256, 64)" in d.message][0].message.endswith(
        "causal=False, block_kv=256, from main() at line "
        f"{planted.splitlines().index(next(ln for ln in planted.splitlines() if 'profiler.measure(functools.partial(attention_impl' in ln)) + 1})")
    assert [d.severity for d in first if "acc=(128, 64)" in d.message] == [Severity.WARNING]

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


def test_a_handler_that_keeps_this_message_makes_it_a_warning() -> None:
    src = variant('if "exceeds available shared memory" in e.args[0]:',
                  'if "Incompatible shapes" in str(e):')
    assert severities(src)["first"] == Severity.WARNING


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

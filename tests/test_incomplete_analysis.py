"""An analysis that stops short says where and why (WG904), never a silent pass.

- A big file is analysed in pieces (each top-level statement, entry point and function has its
  own step budget): an error on the last lines of a 50,000-line file is reported.
- A piece that spends its budget stops at the statement it was running, with a WG904 there; the
  pieces after it are analysed.
- Nesting past Python's recursion limit gives up on that expression only (its value unknown, a
  WG904 at its line); a long `a + a + ... + a` is evaluated without recursion at all.
- An exception in a model gives up that statement only (WG904 plus one WARNING log line; the
  names it binds become unknown, so no finding rests on a half-done statement) — and in strict
  mode (`WGMMA_LSP_STRICT=1`, set for the whole suite in conftest.py) it propagates, so a crash
  fails the tests.
- `wgmma-lsp check` never prints "All checks passed!" for such a file; `--strict` exits 1.
- The server's document-size limit gives a WG904 on line 1 instead of nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.cli import main
from wgmma_lsp.ide.diagnostics import diagnostics, syntax_diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret import driver, incomplete
from wgmma_lsp.interpret.interp import MAX_STEPS
from wgmma_lsp.interpret.values import Const, Unknown
from wgmma_lsp.models import registry

FIXTURES = Path(__file__).parent / "fixtures"

HEADER = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
"""

# A clean kernel and its pallas_call, with a short loop the analysis unrolls (steps to spend).
SMALL = """

def kernel_{i}(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  steps = 0
  for k in range(8):
    steps = steps + k * 2
  for k in range(8):
    steps = steps - k
  for k in range(8):
    steps = steps + k
  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


def f_{i}(a, b):
  return pl.pallas_call(
      kernel_{i},
      out_shape=jax.ShapeDtypeStruct((64, 128), jnp.float32),
      in_specs=[pl.BlockSpec(memory_space=plgpu.SMEM)] * 2,
      out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
  )(a, b)
"""


def _planted_wg001() -> tuple[str, str]:
    """The kernel of tests/fixtures/errors/dtype_store_bf16.py (a WG001: a bfloat16 value stored
    into a float32 accumulator), and the text of the line JAX blames."""
    source = (FIXTURES / "errors" / "dtype_store_bf16.py").read_text()
    kernel = source[source.index("def kernel("):source.index("\n\n\ndef f(")]
    blamed = next(line for line in kernel.splitlines() if "# E: WG001" in line)
    return kernel.replace("def kernel(", "def bad_kernel(") + "\n", blamed


def _line_of(source: str, text: str) -> int:
    return source.splitlines().index(text)


def _codes(analysis) -> list[tuple[int, str]]:
    return [(d.span.line, d.code) for d in diagnostics(analysis)]


def test_a_50000_line_file_reports_the_error_on_its_last_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    bad, blamed = _planted_wg001()
    parts, lines, i = [HEADER], HEADER.count("\n"), 0
    while lines < 50_000 - bad.count("\n") - 2:
        parts.append(SMALL.format(i=i))
        lines += SMALL.count("\n")
        i += 1
    source = "".join(parts) + "\n\n" + bad
    assert 49_900 <= source.count("\n") <= 50_100
    made = []
    real = driver.Pieces
    monkeypatch.setattr(driver, "Pieces", lambda interp: made.append(interp) or real(interp))
    analysis = analyze(source, "big.py")
    assert _codes(analysis) == [(_line_of(source, blamed), "WG001")]
    assert analysis.incomplete == []
    # It took more steps than one file was allowed before (one budget for the whole file), and
    # stayed within the document's budget.
    steps = made[0].steps
    assert MAX_STEPS < steps <= incomplete.file_steps(len(source.splitlines()))


RUNAWAY = HEADER + """

def slow_kernel(a_ref, b_ref, o_ref):
  total = 0
  for a in range(8):
    for b in range(8):
      for c in range(8):
        for d in range(8):
          for e in range(8):
            for f in range(8):
              for g in range(8):
                total = total + a

  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)
  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


def slow(a, b):
  # launched: a kernel's loops are unrolled in full, as JAX unrolls them when it traces
  return pl.pallas_call(slow_kernel, out_shape=jax.ShapeDtypeStruct((64, 128), jnp.float32))(a, b)


""" + _planted_wg001()[0]


def test_a_function_that_spends_its_budget_stops_there_and_the_next_is_analysed() -> None:
    analysis = analyze(RUNAWAY, "runaway.py")
    nest = range(_line_of(RUNAWAY, "  for a in range(8):"), _line_of(RUNAWAY, "                total = total + a") + 1)
    (stopped, code), planted = _codes(analysis)
    assert code == "WG904" and stopped in nest  # where in the nest the budget ran out
    assert planted == (_line_of(RUNAWAY, _planted_wg001()[1]), "WG001")
    (stop,) = analysis.incomplete
    assert stop.reason == "budget" and "`slow`" in stop.message
    (d,) = [d for d in diagnostics(analysis) if d.code == "WG904"]
    assert d.severity == Severity.INFORMATION and d.doc_uri


def test_the_file_budget_spent_says_where_the_rest_was_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    source = (Path(__file__).parent.parent / "examples" / "seed_errors.py").read_text()
    complete = analyze(source, "seed.py")
    assert [c for _, c in _codes(complete)] == ["WG001", "WG002", "WG003"]
    monkeypatch.setattr(incomplete, "file_steps", lambda n_lines: 150)  # of the 368 steps it takes
    cut = analyze(source, "seed.py")
    stops = [s for s in cut.incomplete if s.reason == "file-budget"]
    assert len(stops) == 1 and "ran out here" in stops[0].message
    # what was found before the stop is kept; nothing after it is claimed
    found = [line for line, code in _codes(cut) if code != "WG904"]
    assert set(found) < {line for line, _ in _codes(complete)}
    assert all(line <= stops[0].span.line for line in found) or found == []


def _sum_file(expression: str) -> tuple[str, int, str]:
    bad, blamed = _planted_wg001()
    source = HEADER + "\na = 1\nx = " + expression + "\ny = x\n\n\n" + bad
    return source, _line_of(source, "x = " + expression), blamed


def _value_of(analysis, name: str, line: int) -> list:
    return [v for r in analysis.records.values() if r.name == name and r.span.line == line for v in r.values]


def test_a_600_term_sum_is_analysed_whole() -> None:
    source, line, blamed = _sum_file(" + ".join(["a"] * 600))
    analysis = analyze(source, "sum.py")
    assert _codes(analysis) == [(_line_of(source, blamed), "WG001")]
    assert _value_of(analysis, "y", line + 1) == [Const(600)]


def test_a_5000_term_sum_is_analysed_as_far_as_python_compiles_it() -> None:
    """Python 3.11 and 3.12 cannot compile it (RecursionError): only its statement is lost, and
    said so. Python 3.13 compiles it: it is analysed whole."""
    source, line, blamed = _sum_file(" + ".join(["a"] * 5000))
    try:
        compile(source, "sum.py", "exec")
    except RecursionError:  # CPython itself gives up on it
        analysis = analyze(source, "sum.py")
        assert _codes(analysis) == [(line, "WG904"), (_line_of(source, blamed), "WG001")]
        assert [d.span.line for d in syntax_diagnostics(analysis)] == [line]
        return
    analysis = analyze(source, "sum.py")
    assert _codes(analysis) == [(_line_of(source, blamed), "WG001")]
    assert _value_of(analysis, "y", line + 1) == [Const(5000)]


def test_an_expression_too_deep_to_follow_is_unknown_and_the_rest_is_analysed() -> None:
    source, line, blamed = _sum_file(" ** ".join(["a"] * 600))  # right-nested: valid, 600 deep
    compile(source, "pow.py", "exec")
    analysis = analyze(source, "pow.py")
    assert _codes(analysis) == [(line, "WG904"), (_line_of(source, blamed), "WG001")]
    (stop,) = analysis.incomplete
    assert stop.reason == "too-deep" and "recursion limit" in stop.message
    assert all(isinstance(v, Unknown) for v in _value_of(analysis, "y", line + 1))


CRASHING = HEADER + """

def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    x = acc_ref[...].astype(jnp.bfloat16)
    x = jnp.exp(x).astype(jnp.float32)
    acc_ref[...] = x
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


""" + _planted_wg001()[0]


def _raise(call):
    raise RuntimeError("simulated model bug")


def test_a_model_that_raises_fails_the_analysis_in_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    assert incomplete.strict()  # conftest.py turns it on for the whole suite
    assert _codes(analyze(CRASHING, "crash.py")) == [(_line_of(CRASHING, _planted_wg001()[1]), "WG001")]
    monkeypatch.setitem(registry.MODELS, "jnp.exp", _raise)
    with pytest.raises(RuntimeError, match="simulated model bug"):
        analyze(CRASHING, "crash.py")


def test_a_model_that_raises_gives_up_its_statement_only(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(incomplete.STRICT_ENV, "0")
    monkeypatch.setitem(registry.MODELS, "jnp.exp", _raise)
    with caplog.at_level(logging.WARNING, logger="wgmma_lsp"):
        analysis = analyze(CRASHING, "crash.py")
    crashed = _line_of(CRASHING, "    x = jnp.exp(x).astype(jnp.float32)")
    # x is unknown after the statement that gave up: not the bfloat16 it held before (which
    # would make the store below a WG001 that JAX does not raise); the other kernel is checked.
    assert _codes(analysis) == [(crashed, "WG904"), (_line_of(CRASHING, _planted_wg001()[1]), "WG001")]
    (stop,) = analysis.incomplete
    assert stop.reason == "internal-error" and "RuntimeError: simulated model bug" in stop.message
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "RuntimeError" in r.getMessage()]
    assert len(warned) == 1 and "simulated model bug" in warned[0].getMessage()


WITHOUT_SHAPES = ("; 1 kernel checked without concrete shapes: add a '# wgmma-lsp: trace ...' comment "
                  "for more checks, see docs/trace-mode.md.")


def test_check_never_passes_a_file_it_did_not_fully_analyse(tmp_path: Path, capsys) -> None:
    path = tmp_path / "runaway.py"
    path.write_text(RUNAWAY.replace("acc_ref[...].astype(jnp.bfloat16)", "acc_ref[...]")
                    .replace(_planted_wg001()[1], _planted_wg001()[1].split(" = ")[0] + " = x"))
    assert main(["check", "--no-progress", str(path)]) == 0
    out = capsys.readouterr().out
    assert "WG904 [information] analysis incomplete" in out
    # (the kernel is launched with arguments nobody gave: the summary says so too)
    assert out.splitlines()[-1] == "No errors found, but 1 file was not fully analysed (WG904)" + WITHOUT_SHAPES
    assert main(["check", "--no-progress", "--strict", str(path)]) == 1
    capsys.readouterr()
    # ignoring the note hides the line, not the verdict
    assert main(["check", "--no-progress", "--ignore", "WG904", str(path)]) == 0
    out = capsys.readouterr().out
    assert "WG904" not in out.replace("(WG904)", "") and "All checks passed!" not in out


def test_check_counts_unanalysed_files_beside_errors(tmp_path: Path, capsys) -> None:
    (tmp_path / "runaway.py").write_text(RUNAWAY)
    assert main(["check", "--no-progress", str(tmp_path / "runaway.py")]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "Found 1 error and 1 note in 1 file; 1 file was not fully analysed (WG904)" + WITHOUT_SHAPES


def test_the_server_says_a_document_is_too_large_to_analyse() -> None:
    from wgmma_lsp.editor_analyses import MAX_SOURCE_CHARS, safe_analyze

    source = "x = 1\n" + "#" * MAX_SOURCE_CHARS + "\n"
    analysis = safe_analyze(source, None)
    (d,) = diagnostics(analysis)
    assert (d.code, d.span.line, d.severity) == ("WG904", 0, Severity.INFORMATION)
    assert f"limit {MAX_SOURCE_CHARS:,}" in d.message and "too large" in d.message


def test_wg904_is_a_documented_tool_code(tmp_path: Path, capsys) -> None:
    assert main(["explain", "WG904"]) == 0
    assert "WG904 analysis-incomplete" in capsys.readouterr().out.splitlines()[0]
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "--no-progress", "--ignore", "WG904", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "All checks passed!"  # a file analysed whole

"""The error-tolerant parse: one linear pass, broken statements neutralised, the rest kept."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from wgmma_lsp import syntax, syntax_repair
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.settings import Settings

SEED = Path(__file__).resolve().parent.parent / "examples" / "seed_errors.py"


def _lines_of(source: str, needle: str) -> int:
    return next(i for i, ln in enumerate(source.splitlines()) if needle in ln)


def test_several_broken_lines_keep_every_other_finding_and_hover() -> None:
    source = SEED.read_text()
    broken = (source
              .replace("    half = acc_ref[...].astype(jnp.bfloat16) * 0.5",
                       "    half = acc_ref[...].astype(jnp.bfloat16) * 0.5\n    oops = half +")
              .replace("    plgpu.wgmma(acc_ref, a_ref, b_ref)\n    acc_ref[...] = acc_ref[...].T",
                       "    if acc_ref\n    plgpu.wgmma(acc_ref, a_ref, b_ref)\n    acc_ref[...] = acc_ref[...].T")
              .replace("def smem_accumulator_kernel(a_ref, b_ref, o_ref):",
                       "def half_typed(a, b):\n  return pl.pallas_call(\n\n"
                       "def smem_accumulator_kernel(a_ref, b_ref, o_ref):"))
    with pytest.raises(SyntaxError):
        ast.parse(broken)
    analysis = analyze(broken)
    codes = sorted(d.code for d in diagnostics(analysis) if d.code.startswith("WG0"))
    assert codes == ["WG001", "WG002", "WG003"]
    assert len(analysis.syntax_errors) == 3
    # a hover below the last broken line still answers
    line = _lines_of(broken, "plgpu.wgmma(acc_ref, a_ref, b_ref)  # error: acc_ref is not")
    col = broken.splitlines()[line].index("acc_ref")
    info = hover(analysis, line, col, Settings())
    assert info is not None and "smem" in info.markdown


def test_error_spans_and_messages() -> None:
    source = "x = 1\ny = (1,\nz = 3\ndef f():\n    return 1 +\nw = 4\n"
    parsed = syntax.parse(source)
    msgs = {span.line: msg for span, msg in parsed.errors}
    assert "never closed" in msgs[1]
    assert msgs[4] == "invalid syntax"
    lines = source.splitlines()
    for span, _msg in parsed.errors:
        assert 0 <= span.col <= span.end_col <= len(lines[span.end_line])
    kept = {n.targets[0].id for n in parsed.tree.body if isinstance(n, ast.Assign)}
    assert {"x", "w"} <= kept


def test_body_of_a_broken_header_is_kept() -> None:
    source = "def f(a, b\n  c = 1\n  d = 2\n\ne = 3\n"
    src2 = "def kernel(a_ref, b_ref o_ref):\n  acc = a_ref[...]\n  b = acc + 1\n\ne = 3\n"
    for s in (source, src2):
        parsed = syntax.parse(s)
        names = {n.id for n in ast.walk(parsed.tree) if isinstance(n, ast.Name)}
        assert "e" in names
    names = {n.id for n in ast.walk(syntax.parse(src2).tree) if isinstance(n, ast.Name)}
    assert {"acc", "b"} <= names  # the body of the broken `def` is still analysed


def test_cpython_only_errors() -> None:
    parsed = syntax.parse("1 = x\ny = 2\n")
    assert parsed.errors and parsed.errors[0][0].line == 0
    assert [type(n).__name__ for n in parsed.tree.body] == ["Pass", "Assign"]


def test_linear_number_of_whole_file_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """No loop re-parsing the whole file per error or per line."""
    lines = []
    for i in range(300):
        lines += [f"def f{i}(x):", f"  y{i} = x + {i}", "   bad = (" if i % 3 == 0 else "  pass"]
    source = "\n".join(lines) + "\n"
    calls: list[int] = []
    chars: list[int] = []
    real = ast.parse

    def counting(text, *a, **k):
        if len(text) > len(source) // 2:
            calls.append(len(text))
        chars.append(len(text.lstrip("\n")))
        return real(text, *a, **k)

    monkeypatch.setattr(syntax.ast, "parse", counting)
    parsed = syntax.parse(source)
    assert len(calls) <= 2 + syntax.MAX_DISAGREEMENTS
    assert sum(chars) <= 8 * len(source)
    defs = [n for n in parsed.tree.body if isinstance(n, ast.FunctionDef)]
    assert len(defs) >= 290
    assert len(parsed.errors) >= min(100, syntax.MAX_REPORTED)


@pytest.mark.parametrize("text", ["(" * 5000, "x = [\n" + "1,\n" * 3000, "\tif x:\n  y\n\t z\n",
                                  "class A:\n  def f(self):\n    x = [1, 2\n  def g(self):\n    pass\n"])
def test_odd_inputs_parse(text: str) -> None:
    parsed = syntax.parse(text)
    assert isinstance(parsed.tree, ast.Module)
    assert parsed.errors


def _without_parso(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("parso was asked: the quick repair should have done it")

    monkeypatch.setattr(syntax_repair, "_classify", refuse)


def _repaired_without_parso(source: str, monkeypatch: pytest.MonkeyPatch) -> syntax.Parsed:
    """The parse of a text CPython rejects, repaired without parso."""
    with pytest.raises(SyntaxError):
        ast.parse(source)
    _without_parso(monkeypatch)
    return syntax.parse(source)


def _assigned(tree: ast.AST) -> set[str]:
    return {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def test_bracket_left_open_in_a_multiline_statement_is_repaired_without_parso(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The typing case that used to send the rest of the function to parso: a call split over
    lines whose closing bracket is gone. Only that statement goes; the lines after it are kept
    at their own line numbers."""
    source = ("def f(x, y):\n"
              "  a = g(\n"
              "      x, y,\n"
              "  b = x + 1\n"
              "  c = (b,\n"
              "       y)[0\n"
              "  d = c\n"
              "  return d\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    # CPython's own messages, where CPython puts them (`b = x + 1` read as inside `g(`), and
    # the statement that left its bracket open (`b = ...` at its column starts a statement)
    assert [span.line for span, _ in parsed.errors] == [1, 3, 5]
    kept = {n.targets[0].id: n.lineno for n in ast.walk(parsed.tree) if isinstance(n, ast.Assign)}
    assert kept == {"b": 4, "d": 7}


def test_header_without_its_colon_keeps_its_block_without_parso(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("def f(x):\n"
              "  for i in range(x)\n"
              "    y = i * 2\n"
              "    z = y + 1\n"
              "  return x\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [span.line for span, _ in parsed.errors] == [1]
    assert {"y", "z"} <= _assigned(parsed.tree)
    # the block is an orphan function nobody calls (analysed with nothing known), as parso's
    # repair keeps it; the function it sat in still returns
    names = {n.name for n in ast.walk(parsed.tree) if isinstance(n, ast.FunctionDef)}
    assert names == {"f", "_wgmma_orphan_2"}


def test_quick_repair_never_turns_continuation_lines_into_other_code() -> None:
    """A line blanked inside brackets would change the call around it (`g(x,\\n\\n z)` is a
    different call): the quick repair writes `pass`, which cannot be part of an expression, so
    such a text does not parse and goes to parso, which drops the whole statement."""
    source = ("def f(x, z):\n"
              "  a = g(x,\n"
              "        y w,\n"
              "        z)\n"
              "  b = a\n")
    parsed = syntax.parse(source)
    calls = [n for n in ast.walk(parsed.tree) if isinstance(n, ast.Call)]
    assert not calls  # the broken call is gone, not read as g(x, z)
    assert "b" in _assigned(parsed.tree)


def test_bracket_left_open_in_main_keeps_the_main_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bracket left open near the end of `main()` would swallow the `if __name__ == "__main__":`
    block below (a bracket may span lines at any column): in a file that fails to parse, a
    compound header at column 0 ends the brackets left open above it. The block stays the
    program's entry point, and the lines of `main()` after the broken statement are kept."""
    source = ("def main(_):\n"
              "  for n in (1, 2):\n"
              "    r = measure(\n"
              "        partial((f, n),\n"
              "    )(n)\n"
              "    s = n + 1\n"
              "  t = 2\n"
              "\n"
              "if __name__ == \"__main__\":\n"
              "  app.run(main)\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [span.line for span, _ in parsed.errors] == [2]
    last = parsed.tree.body[-1]
    assert isinstance(last, ast.If) and last.lineno == 9
    assert {"s", "t"} <= _assigned(parsed.tree)


def test_a_loop_is_repaired_statement_by_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken line inside a `for` (or `if`, `while`, `with`, `try`) costs the repair of that
    line only: the loop is taken apart clause by clause, as a function is, and the rest of it
    is kept, `else` included."""
    source = ("def f(x):\n"
              "  for i in range(x):\n"
              "    a = i\n"
              "    b = [i for\n"
              "    c = a\n"
              "  else:\n"
              "    d = 1\n"
              "  return x\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [span.line for span, _ in parsed.errors] == [3]
    assert {"a", "c", "d"} <= _assigned(parsed.tree)
    loop = next(n for n in ast.walk(parsed.tree) if isinstance(n, ast.For))
    assert loop.orelse and loop.lineno == 2


def test_signature_left_open_keeps_the_body_and_what_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """`def kernel(` whose closing line is gone: the body is found by its indentation (the
    parameters sit deeper), kept as an orphan's body, and the statements after it are kept."""
    source = ("@jax.jit\n"
              "def kernel(\n"
              "    a_ref,\n"
              "    b_ref,\n"
              "  acc = a_ref[...]\n"
              "  out = acc + 1\n"
              "\n"
              "e = 3\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [(span.line, msg) for span, msg in parsed.errors] == [(1, "'(' was never closed")]
    assert {"acc", "out", "e"} <= _assigned(parsed.tree)
    assert isinstance(parsed.tree.body[-1], ast.Assign) and parsed.tree.body[-1].lineno == 8


def test_stray_line_between_decorator_and_def(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("@functools.partial(jax.jit, static_argnames=['n'])\n"
              "    x: jax.Array, *, n: int = 4,\n"
              "def f(x, n):\n"
              "  y = x + n\n"
              "  return y\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [(span.line, msg) for span, msg in parsed.errors] == [(1, "unexpected indent")]
    fn = parsed.tree.body[0]
    assert isinstance(fn, ast.FunctionDef) and fn.name == "f" and fn.lineno == 3
    assert "y" in _assigned(fn)


def test_lines_indented_too_deep_in_the_main_block(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("def main(_):\n"
              "  pass\n"
              "\n"
              "if __name__ == \"__main__\":\n"
              " from absl import app\n"
              "\n"
              "  jax.config.config_with_absl()\n"
              "  app.run(main)\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [span.line for span, _ in parsed.errors] == [6]
    block = parsed.tree.body[-1]
    assert isinstance(block, ast.If) and block.lineno == 4  # the block stays the entry point
    # the lines indented too deep are the body of a function nobody calls, inside the block
    # (the analysis runs it in the block's context: tests/test_broken_main_block.py)
    assert [type(s).__name__ for s in block.body] == ["ImportFrom", "FunctionDef"]


def test_stray_line_inside_a_call_that_closes_takes_the_call_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line typed inside a call's arguments, at the statement's column (`lambda :`), with the
    call's closing bracket below it: the call goes whole; the statements after it stay."""
    source = ("def f(x):\n"
              "  g = call(\n"
              "      x,\n"
              "      y=1,\n"
              "  lambda :\n"
              "  )\n"
              "  h = g\n"
              "  return h\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [span.line for span, _ in parsed.errors] == [4]
    assert _assigned(parsed.tree) == {"h"}


def test_statement_dedented_to_no_block_column_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("def f(x):\n"
              "  a = x\n"
              " b = a + 1\n"
              "  c = b\n"
              "  return c\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors == [(syntax.Span(2, 1, 2, 10), "unindent does not match any outer indentation level")]
    fn = parsed.tree.body[0]
    assert isinstance(fn, ast.FunctionDef) and [type(s).__name__ for s in fn.body] == ["Assign"] * 3 + ["Return"]


def test_lines_deeper_than_their_block_with_no_header(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `def` line deleted: its signature's and body's lines sit deeper than the block they are
    now read in. The statement above is kept; the run of deeper lines is repaired as a block of
    its own (the body of a function nobody calls), junk lines one by one, the rest kept."""
    source = ("from jax.experimental import pallas as pl\n"
              "\n"
              "    input_ref,\n"
              "    *,\n"
              "    block_row: int,\n"
              "):\n"
              "  row_len = input_ref.shape[-1]\n"
              "  mask = row_len + 1\n"
              "\n"
              "x = 1\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors and (parsed.errors[0][0].line, parsed.errors[0][1]) == (2, "unexpected indent")
    assert isinstance(parsed.tree.body[0], ast.ImportFrom)
    orphan = parsed.tree.body[1]
    assert isinstance(orphan, ast.FunctionDef) and orphan.name == "_wgmma_orphan_3"
    assert {"row_len", "mask"} <= _assigned(orphan)
    assert "x" in _assigned(parsed.tree.body[-1])


def test_header_whose_block_is_gone_keeps_its_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("def f(x, axis):\n"
              "  if axis != 1:\n"
              "  y = x + axis\n"
              "  return y\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    # where CPython blames it: the first token after the header (the statement was parsed alone)
    assert [(span.line, span.col, msg) for span, msg in parsed.errors] == \
        [(2, 2, "expected an indented block after 'if' statement on line 2")]
    test = next(n for n in ast.walk(parsed.tree) if isinstance(n, ast.If))
    assert (test.lineno, test.col_offset) == (2, 2) and isinstance(test.body[0], ast.Pass)
    assert "y" in _assigned(parsed.tree)


def _parsed_chars(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[syntax.Parsed, int]:
    chars: list[int] = []
    real = ast.parse

    def counting(text, *a, **k):  # type: ignore[no-untyped-def]
        chars.append(len(text.lstrip("\n")))
        return real(text, *a, **k)

    monkeypatch.setattr(syntax.ast, "parse", counting)
    parsed = syntax.parse(source)
    return parsed, sum(chars)


def test_missing_block_deep_in_a_kernel_is_not_parsed_once_per_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """`try:` typed above a line six blocks deep: CPython names the header's line, so each
    enclosing block goes straight to the statement holding it; the statements around it are
    parsed once (not every enclosing block again to learn where its error is)."""
    body = "".join(f"{'  ' * (i + 1)}x{i} = {i}\n{'  ' * (i + 1)}for i{i} in range({i}):\n" for i in range(6))
    inner = "  " * 7
    source = ("def kernel(x):\n" + body + f"{inner}a = 1\n{inner}try:\n{inner}b = a\n{inner}c = b\n"
              + "".join(f"{'  ' * (i + 1)}y{i} = {i}\n" for i in reversed(range(6)))
              + "".join(f"def f{i}(x):\n  return x + {i}\n" for i in range(40)))
    parsed, chars = _parsed_chars(source, monkeypatch)
    assert [msg for _, msg in parsed.errors] == ["expected an indented block after 'try' statement on line 15"]
    assert {"b", "c", "y0", "y5"} <= _assigned(parsed.tree)
    assert chars <= 3 * len(source)


def test_statement_keyword_ends_a_bracket_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """`{` typed into an `assert`: the `except` below it, back at the statement's indentation, is
    no continuation of that bracket; the handler and the code after the `try` are kept."""
    source = ("def main():\n"
              "  for config in configs:\n"
              "    try:\n"
              "      out = measure(config)\n"
              "      assert out i{s not None\n"
              "    except ValueError:\n"
              "      skipped = 1\n"
              "      continue\n"
              "    best = out\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors[0][0].line == 4
    assert {"out", "skipped", "best"} <= _assigned(parsed.tree)


def test_argument_line_typed_twice_goes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of a call duplicated (a keystroke that copies the line): the copy goes, and the
    call is kept as it was, so the kernel it runs is still reached."""
    source = ("def main():\n"
              "  try:\n"
              "    out, runtimes = profiler.measure(\n"
              "        functools.partial(matmul, config=config), iterations=10,\n"
              "        functools.partial(matmul, config=config), iterations=10,\n"
              "    )(a, b, None)\n"
              "  except ValueError:\n"
              "    raise\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert [msg for _, msg in parsed.errors] == ["positional argument follows keyword argument"]
    call = next(n for n in ast.walk(parsed.tree) if isinstance(n, ast.Call) and
                isinstance(n.func, ast.Attribute) and n.func.attr == "measure")
    assert len(call.args) == 1 and [k.arg for k in call.keywords] == ["iterations"]


def test_closing_bracket_closes_the_innermost_of_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """`[` typed inside a call whose `)` follows: the `)` closes the call (the `[` was left open
    inside it), so the lines after the statement start statements and are kept, without parso."""
    source = ("def main():\n"
              "  for config in configs:\n"
              "    try:\n"
              "      out = measure(\n"
              "          partial(matmul, config=config), iterations=10,[\n"
              "      )(a, b)\n"
              "      runtime = median(out)\n"
              "    except ValueError:\n"
              "      continue\n"
              "    best = runtime\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors[0][0].line == 5
    assert {"runtime", "best"} <= _assigned(parsed.tree)


@pytest.mark.parametrize("source", [
    "import jax\n\ndef f():\n\nx = 1\n\ndef g():\n    y = (1,\n    return 2\n",
    "class A:\n    def f(self):\n    # a comment\n\n    x = 1\n",
    "if 1:\n  for i in range(3):\n\n  y = 2\nz = (\n",
    "def f(x):\n    with x:\n    return x\n",
    "try:\n# a licence\n# header\n\n\"\"\"The module.\"\"\"\nimport os\n",  # block past a comment run
    "def f(ref):\n    pipeline = g(\n        ref)\n    try:\n    ref = ref.at[0]\n    pipeline(ref)\n",
    # decorators with no `def` after them: CPython blames the line after them
    "def f():\n    @g\n      x = 1\n    return x\n",
    "def f():\n    @g(axis=1)\n        def h():\n      return 1\n    return h\n",
    # an error at the end of a statement parsed alone is blamed where the file goes on
    "def f():\n    if 1:\n      @partial(\n          g,\n      )\n    def h(o):\n        return o\n    return h\n",
])
def test_first_error_is_reported_where_cpython_blames_it(source: str) -> None:
    """The statement is repaired alone, but its error is CPython's for the whole file: same
    line and message (and, for a missing block, the column of the token blamed)."""
    with pytest.raises(SyntaxError) as raised:
        ast.parse(source)
    parsed = syntax.parse(source)
    span, msg = parsed.errors[0]
    assert (span.line, msg) == (raised.value.lineno - 1, raised.value.msg)
    if msg.startswith("expected an indented block"):
        assert span.col == raised.value.offset - 1


def test_decorators_of_a_deleted_def_go_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("@functools.partial(jax.jit, static_argnames=['n'])\n"
              "    x: jax.Array, *, n: int = 4,\n"
              ") -> jax.Array:\n"
              "  y = x + n\n"
              "  return y\n"
              "\n"
              "z = 1\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors
    assert {"y", "z"} <= _assigned(parsed.tree)


def test_try_without_its_handler_keeps_its_block_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """`try:` whose `except` line is gone (or half typed): its block runs whatever happens, so
    it stays in the flow (an `if 1:` in its place), not an orphan function's body."""
    source = ("def main():\n"
              "  for n in (1, 2):\n"
              "    try:\n"
              "      out = measure(n)\n"
              "    excep ValueError:\n"
              "      continue\n"
              "    best = out\n")
    parsed = _repaired_without_parso(source, monkeypatch)
    assert parsed.errors
    loop = next(n for n in ast.walk(parsed.tree) if isinstance(n, ast.For))
    assert isinstance(loop.body[0], ast.If) and loop.body[0].lineno == 3
    assert {"out", "best"} <= _assigned(loop)

"""Interpret mode: a kernel given `interpret=` parameters (`interpret=True`, `InterpretGPUParams`)
runs in a CPU interpreter and is never lowered (models/interpret_mode.py): trace-time rules
apply to it, lowering-time rules do not.

Ground truth: real JAX runs every entry point of each fixture under tests/fixtures/interpret
in interpret mode on the CPU (`jax.jit(f)(zeros)`): it runs, or raises exactly the fixture's
`# E:` errors (trace-time) from their lines. Each fixture sets `INTERPRET = ...` on one line; its
lowered twin (`INTERPRET = None`) must get lowering-time errors, and JAX's Mosaic GPU lowering
must raise them: the fixtures hold kernels the lowering rejects, so the silence is earned.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from jax_oracle import Verdict, _blamed_line, _load, expectations, jax_message, trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.entry.declared import parse_entry_points
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.rules.registry import RULES

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "interpret").glob("*.py"))
_INTERPRET_LINE = re.compile(r"^INTERPRET = .*$", re.M)


def _skip_unless_spelled(source: str) -> None:
    """A fixture written with `plgpu.InterpretGPUParams` needs a JAX that exports it (0.12)."""
    import jax.experimental.pallas.mosaic_gpu as plgpu

    if "plgpu.InterpretGPUParams" in source and not hasattr(plgpu, "InterpretGPUParams"):
        pytest.skip("this JAX has no plgpu.InterpretGPUParams")


def _diagnostics(source: str, path: Path) -> set[tuple[int, str, str, Severity]]:
    return {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip(), d.severity)
            for d in diagnostics(analyze(source, str(path)))}


def run_in_interpret_mode(path: Path) -> list[Verdict]:
    """Every `# wgmma-lsp: trace` entry point, run on the CPU with zeros for its example arrays."""
    import jax
    import jax.numpy as jnp

    module = _load(path)
    ns = dict(vars(module))
    ns["__wgmma_spec__"] = lambda dtype, shape: jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    out = []
    for entry in parse_entry_points(path.read_text()):
        call = ast.parse(entry.expression, mode="eval").body
        assert isinstance(call, ast.Call), entry
        fn = eval(compile(ast.Expression(call.func), "<entry>", "eval"), ns)
        args = [eval(compile(ast.Expression(a), "<entry>", "eval"), ns) for a in call.args]
        # Example arrays are zeros; other arguments (a kernel function) are fixed.
        arrays = [jnp.zeros(a.shape, a.dtype) for a in args if isinstance(a, jax.ShapeDtypeStruct)]

        def run(*xs, fn=fn, args=args):
            it = iter(xs)
            return fn(*[next(it) if isinstance(a, jax.ShapeDtypeStruct) else a for a in args])

        try:
            jax.block_until_ready(jax.jit(run)(*arrays))
        except Exception as e:  # the verdict we compare against
            out.append(Verdict(entry.call, _blamed_line(e, path), jax_message(e), type(e).__name__))
        else:
            out.append(Verdict(entry.call, None, None))
    return out


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_interpreted_kernel_gets_only_trace_time_errors(path: Path) -> None:
    source = path.read_text()
    _skip_unless_spelled(source)
    expected = expectations(source)
    assert expected and all(RULES[code].installed_stage() != "lower" for _, code, _ in expected)
    assert _diagnostics(source, path) == {(ln, code, msg, Severity.ERROR) for ln, code, msg in expected}
    ran = run_in_interpret_mode(path)
    assert {(v.line, v.message.rstrip()) for v in ran if v.message is not None} == {(ln, msg) for ln, _, msg in expected}
    assert any(v.message is None for v in ran), "some kernel must run in the interpreter"


def _jax_text(code: str, message: str, exc: str | None = None) -> str:
    rule = RULES[code]
    bare = rule.template.startswith(("assert ", "raise "))
    return f"(empty {rule.exception})" if bare else message


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_lowered_twin_gets_the_lowering_errors(path: Path, tmp_path: Path) -> None:
    source = path.read_text()
    _skip_unless_spelled(source)
    assert len(_INTERPRET_LINE.findall(source)) == 1
    twin = tmp_path / path.name
    twin.write_text(_INTERPRET_LINE.sub("INTERPRET = None", source))
    found = {(code, msg) for _, code, msg, sev in _diagnostics(twin.read_text(), twin) if sev == Severity.ERROR}
    assert any(RULES[code].installed_stage() == "lower" for code, _ in found), found
    lowered = {(v.message or f"(empty {v.exc_type})").rstrip() for v in trace_file(twin, lower=True) if v.message is not None}
    assert lowered == {_jax_text(code, msg).rstrip() for code, msg in found}


LOWERING_FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("lowering*/*.py"))


def with_interpret(source: str) -> str:
    """`source` with `interpret=True` added to every `pallas_call(...)` and `plgpu.kernel(...)`
    call (positions from the syntax tree, edited from the end so earlier ones stay valid)."""
    lines = source.splitlines(keepends=True)
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and ast.unparse(n.func).endswith(("pallas_call", "plgpu.kernel"))]
    for node in sorted(calls, key=lambda n: (n.end_lineno, n.end_col_offset), reverse=True):
        assert node.end_lineno is not None and node.end_col_offset is not None
        row = node.end_lineno - 1
        line = lines[row].encode()
        close = node.end_col_offset - 1  # the closing parenthesis (byte offset)
        before = source.encode()[:sum(len(ln.encode()) for ln in lines[:row]) + close].rstrip()
        sep = "" if before.endswith((b",", b"(")) else ", "
        lines[row] = (line[:close] + f"{sep}interpret=True".encode() + line[close:]).decode()
    return "".join(lines)


@pytest.mark.parametrize("path", LOWERING_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_lowering_rule_fires_on_a_lowering_fixture_in_interpret_mode(path: Path) -> None:
    """Every kernel of the lowering fixtures, given `interpret=True`: their lowering-time errors
    are gone (JAX never lowers them), their trace-time ones stay."""
    source = path.read_text()
    interpreted = with_interpret(source)
    assert interpreted.count("interpret=True") >= 1
    before = {(ln, code) for ln, code, _, _ in _diagnostics(source, path)}
    after = {(ln, code) for ln, code, _, _ in _diagnostics(interpreted, path)}
    assert {c for _, c in after if RULES[c].installed_stage() == "lower"} == set()
    assert after == {(ln, c) for ln, c in before if RULES[c].installed_stage() != "lower"}


def test_an_interpret_flag_not_known_makes_the_lowering_errors_possible_only(tmp_path: Path) -> None:
    """`interpret=` read from the environment: the kernel may be lowered (the twin above proves
    JAX's lowering rejects it) or interpreted (it runs): its lowering errors are warnings."""
    path = FIXTURES[0]
    source = _INTERPRET_LINE.sub('INTERPRET = os.environ.get("INTERPRET") == "1"',
                                 "import os\n" + path.read_text())
    found = _diagnostics(source, tmp_path / path.name)
    lowering = {(code, sev) for _, code, _, sev in found if RULES[code].installed_stage() == "lower"}
    assert lowering and all(sev == Severity.WARNING for _, sev in lowering), found
    assert {(ln - 1, code, msg) for ln, code, msg, sev in found if sev == Severity.ERROR} \
        == expectations(path.read_text())



FORCED_PROGRAM = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams
from jax._src.pallas.mosaic_gpu.interpret.params import force_gpu_interpret_mode


def too_big(x):
  def body(x_ref, o_ref):
    def inner(s):
      s[...] = jnp.zeros((256, 256), jnp.float32)
      o_ref[...] = x_ref[...]
    pl.run_scoped(inner, plgpu.SMEM((256, 256), jnp.float32))
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def forced(x):
  with force_gpu_interpret_mode():
    return too_big(x)


def forced_with_params(x):
  with force_gpu_interpret_mode(InterpretGPUParams(detect_races=True)):
    return too_big(x)


def lowered(x):
  return too_big(x)


def forced_with_none(x):
  with force_gpu_interpret_mode(None):
    return too_big(x)
'''

SMEM_ERROR = "Mosaic GPU kernel exceeds available shared memory"


def _entries(*calls: str) -> str:
    return "".join(f"# wgmma-lsp: trace {c}(f32[128])\n" for c in calls)


def _verdicts(path: Path) -> tuple[list[bool], list[bool]]:
    """Per entry point, in order: whether JAX's lowering raises the SMEM error, and whether the
    analysis proves WG032 in that entry point's context."""
    entries = [e.call for e in parse_entry_points(path.read_text())]
    jax_says = [bool(v.message and v.message.startswith(SMEM_ERROR)) for v in trace_file(path, lower=True)]
    proven: set[str] = set()
    for f in analyze(path.read_text(), str(path)).findings:
        if f.rule.code == "WG032" and f.certain:
            proven.update(c.origin for c in f.contexts if c is not None)
    return jax_says, [f"entry point `{e}`" in proven for e in entries]


@pytest.mark.parametrize("order", [("forced", "lowered", "forced_with_params", "forced_with_none"),
                                   ("lowered", "forced", "forced_with_none", "forced_with_params")])
def test_forced_interpret_mode_holds_for_its_block(order: tuple[str, ...], tmp_path: Path) -> None:
    """`with force_gpu_interpret_mode(...)`: a kernel traced in the block is never lowered by
    Mosaic GPU (JAX's lowering of the entry point raises no SMEM error), one traced outside is;
    `force_gpu_interpret_mode(None)` forces nothing. The entry points run in one analysis, in
    either order: an equal call analysed in another state is not replayed (the memo key holds
    the state)."""
    path = tmp_path / "forced.py"
    path.write_text(FORCED_PROGRAM + _entries(*order))
    jax_says, ours = _verdicts(path)
    assert jax_says == [name in ("lowered", "forced_with_none") for name in order]
    assert ours == jax_says


def test_forced_interpret_mode_with_parameters_not_known_makes_lowering_errors_possible(tmp_path: Path) -> None:
    """Interpret mode forced with parameters the analysis cannot see (None or not): the kernel
    may be lowered, its lowering errors are possible, not proven."""
    path = tmp_path / "forced_unknown.py"
    path.write_text(FORCED_PROGRAM.split("\n\ndef forced_with_params")[0].replace("force_gpu_interpret_mode()", "force_gpu_interpret_mode(PARAMS)")
                    .replace("def forced(x)", "PARAMS = InterpretGPUParams() if os.environ.get('I') else None\n\n\n"
                             "def forced(x)").replace("import jax\n", "import os\nimport jax\n", 1)
                    + _entries("forced"))
    found = [f.certain for f in analyze(path.read_text(), str(path)).findings if f.rule.code == "WG032"]
    assert found == [False]


def test_set_gpu_interpret_mode_holds_from_there_on(tmp_path: Path) -> None:
    """`set_gpu_interpret_mode(params)` forces interpret mode from there on (in JAX: globally),
    `set_gpu_interpret_mode(None)` ends it."""
    program = FORCED_PROGRAM.replace("import force_gpu_interpret_mode", "import set_gpu_interpret_mode") + \
        '''

def set_mode(x):
  set_gpu_interpret_mode()
  return too_big(x)


def unset_mode(x):
  set_gpu_interpret_mode(None)
  return too_big(x)


def lowered_again(x):
  return too_big(x)
'''
    path = tmp_path / "set_mode.py"
    path.write_text(program + _entries("set_mode", "lowered", "unset_mode", "lowered_again", "set_mode_again",
                                       "lowered_last") + "\n\ndef set_mode_again(x):\n  return set_mode(x)\n"
                    "\n\ndef lowered_last(x):\n  return too_big(x)\n")
    from jax._src.pallas.mosaic_gpu.interpret.params import set_gpu_interpret_mode

    try:
        jax_says, ours = _verdicts(path)
    finally:  # (JAX's mode is global: the tests after this one lower their kernels)
        set_gpu_interpret_mode(None)
    assert jax_says == [False, False, True, True, False, False]
    assert ours == jax_says  # (`set_mode` called again is run again: a replay would not set the mode)

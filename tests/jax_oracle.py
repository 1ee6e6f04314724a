"""Ground truth: what real JAX says about a kernel file, traced on the CPU with `jax.make_jaxpr`.

Each `# wgmma-lsp: trace f(specs)` entry point of the file is traced; the verdict is the
exception message and the line of the file that JAX's traceback blames (its last frame in the
file), or a clean trace. The entry points the program makes itself run as Python would run them
(found by the analyzer's own discovery, `wgmma_lsp.entry.discover`): the `if __name__ ==
"__main__":` block is executed in the module's namespace, each pytest test function is
called once per parameter set of its `@pytest.mark.parametrize` decorators, and each test method
of a unittest `TestCase` class once per class that has it and per parameter set, with an
instance of the class, after its `setUp` (`_run_test_method`); whatever JAX calls
they make (`jax.make_jaxpr(f)(...)`, `jax.jit(f).trace(...)`, `jax.eval_shape(...)`) is what runs.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp.entry.declared import parse_entry_points
from wgmma_lsp.entry.discover import discover
from wgmma_lsp.interpret.jax_version import installed, matches

_counter = itertools.count()


@dataclass(frozen=True)
class Verdict:
    entry: str
    line: int | None  # 1-based line JAX blames, None for a clean trace
    message: str | None
    exc_type: str | None = None


def _load(path: Path):
    name = f"_wgmma_fixture_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def kernel_keywords() -> dict[str, str]:
    """`plgpu.kernel`'s output and scratch keywords as the installed JAX names them, for a kernel
    text's `{out}=` and `{scratch}=` (JAX 0.12 renamed out_shape -> out_type and scratch_shapes
    -> scratch_types)."""
    import inspect

    from jax.experimental.pallas import mosaic_gpu as plgpu

    new = "out_type" in inspect.signature(plgpu.kernel).parameters
    return {"out": "out_type" if new else "out_shape", "scratch": "scratch_types" if new else "scratch_shapes"}


def _blamed_line(e: BaseException, path: Path) -> int | None:
    """The line of `path` JAX blames: the innermost frame in the file, following the cause
    chain (lowering errors carry the kernel's stack in `__cause__`)."""
    best = None
    seen: set[int] = set()
    err: BaseException | None = e
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
        if frames:
            best = frames[-1].lineno
        err = err.__cause__ or err.__context__
    return best


def trace_file(path: Path, lower: bool = False) -> list[Verdict]:
    """Trace every entry point (and, with `lower`, lower it for CUDA when tracing succeeds)."""
    import jax
    import jax.numpy as jnp

    source = path.read_text()
    module = _load(path)
    ns = dict(vars(module))
    ns["__wgmma_spec__"] = lambda dtype, shape: jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
    out = []
    for entry in parse_entry_points(source):
        call = ast.parse(entry.expression, mode="eval").body
        assert isinstance(call, ast.Call), entry
        fn = eval(compile(ast.Expression(call.func), "<entry>", "eval"), ns)
        args = [eval(compile(ast.Expression(a), "<entry>", "eval"), ns) for a in call.args]
        # Example arrays are traced; other arguments (a kernel function, a tile size) are fixed.
        arrays = [a for a in args if isinstance(a, jax.ShapeDtypeStruct)]

        def traced(*xs, fn=fn, args=args):
            it = iter(xs)
            return fn(*[next(it) if isinstance(a, jax.ShapeDtypeStruct) else a for a in args])

        try:
            jax.make_jaxpr(traced)(*arrays)
            if lower:
                jax.jit(traced).trace(*arrays).lower(lowering_platforms=("cuda",))
        except Exception as e:  # the verdict we compare against
            mlir = _mlir_verification(str(e), path)
            if mlir is not None:
                out.append(Verdict(entry.call, mlir[0], mlir[1], type(e).__name__))
                continue
            out.append(Verdict(entry.call, _blamed_line(e, path), jax_message(e), type(e).__name__))
        else:
            out.append(Verdict(entry.call, None, None))
    out.extend(run_program_entries(path, module, source))
    return out


def run_program_entries(path: Path, module, source: str) -> list[Verdict]:
    """The `__main__` block and the pytest test functions (one call per parameter set), run."""
    ns = vars(module)
    out = []

    def run(label: str, fn) -> None:
        try:
            fn()
        except SystemExit:  # absl's app.run exits when main returns
            out.append(Verdict(label, None, None))
        except Exception as e:  # the verdict we compare against
            out.append(Verdict(label, _blamed_line(e, path), str(e), type(e).__name__))
        else:
            out.append(Verdict(label, None, None))

    def value(node: ast.expr):
        return eval(compile(ast.Expression(node), str(path), "eval"), ns)

    for site in discover(ast.parse(source)):
        if site.kind == "main-block":
            assert isinstance(site.node, ast.If)
            code = compile(ast.Module(body=site.node.body, type_ignores=[]), str(path), "exec")
            run(site.name, lambda code=code: exec(code, ns))
        elif site.kind == "test" and not site.method:
            fn = ns[site.node.name]
            for case in site.cases:
                label = site.name + "".join(f" {k}={v}" for k, v in case.label)
                run(label, lambda fn=fn, case=case: fn(*[value(a) for a in case.args],
                                                        **{k: value(v) for k, v in case.kwargs}))
        elif site.kind == "test" and site.unittest:
            for i, case in enumerate(site.cases):
                label = site.name + "".join(f" {k}={v}" for k, v in case.label)
                run(label, lambda site=site, i=i: _run_test_method(ns[site.cls], site.node.name, i))
    return out


def _run_test_method(cls, name: str, index: int) -> None:
    """A unittest test method as its runner runs it on an H100: `cls(name)`, `setUp`, the method.
    The method is the one absl's `parameterized` made for the `index`-th case (`test_x0`, ...)
    when the plain name is gone. A `setUp` that skips (off the GPU: the machine running this)
    is taken to pass, as on the GPU the test is for."""
    import unittest

    if not hasattr(cls, name):
        name = f"{name}{index}"
    test = cls(name)
    try:
        test.setUp()
    except unittest.SkipTest:
        pass
    try:
        getattr(test, name)()
    finally:
        test.doCleanups()


def jax_message(e: BaseException) -> str:
    """JAX's message for an exception. JAX 0.12 re-raises MLIR verifier failures as a
    `VerificationError` with a preamble ("Pallas encountered an internal verification error.
    Please file a bug … Error details: ") and the failing operation appended; the verifier's
    own message is what is compared (as 0.10's `Verification failed:` text is). Layout
    inference's count of an op's layouts ends with the op's MLIR text: compared up to it."""
    text = str(e)
    if type(e).__name__ == "VerificationError" and "Error details: " in text:
        return text.split("Error details: ", 1)[1].split("\n see current operation", 1)[0].strip()
    if _LAYOUT_COUNT.match(text):  # the op's MLIR text follows (its SSA numbers vary): cut it
        return text.split(" op=\n", 1)[0]
    return text


#: Layout inference's `_ensure_right_number_of_layouts`: "Expected the same number of
#: in_tmem_layouts (0) as TMEM ref operands (1). op=\n  <the op>".
_LAYOUT_COUNT = re.compile(r"Expected the same number of (?:in|out)_\w+ \(\d+\) (?:as )?[\w ]+ \(\d+\)\. op=\n")


def _mlir_verification(message: str, path: Path) -> tuple[int | None, str] | None:
    """An MLIR verifier failure: the real message (the line after `Verification failed:`,
    without its location) and the line of `path` its location names."""
    lines = message.splitlines()
    if len(lines) < 2 or not lines[0].startswith("Verification failed:"):
        return None
    first = lines[1]
    m = re.search(r"\): ('[\w.]+' op .*)$", first)
    if m is None:
        return None
    loc = re.search(re.escape(f'"{path}":') + r"(\d+):", first)
    return (int(loc.group(1)) if loc else None, m.group(1))


_EXPECT = re.compile(r"(?P<kind>[ESWB])(?:\[(?P<versions>[^\]]*)\])?: (?P<code>WG\d{3}) (?P<msg>.*?)"
                     r"(?=\s+[ESWB](?:\[[^\]]*\])?: WG\d{3} |$)")


def expectations(source: str, kind: str = "E", version: "tuple[int, int, int] | None | str" = "installed"
                 ) -> set[tuple[int, str, str]]:
    """`# E: WG001 message` comments: (1-based line, code, message).

    `# B: WG0xx message` marks where JAX blames an error wgmma-lsp reports elsewhere (kernel-level
    lowering errors have no kernel frame: JAX blames the `pallas_call`), with JAX's own message
    (`(empty AssertionError)` for a bare assert), when it differs from the diagnostic's.

    A comment may say which JAX versions it holds for: `# E[>=0.12]: WG090 …` (see
    `jax_version.matches` for the clauses). It counts only when the installed JAX (or the given
    `version`; "any" for every version) matches; an untagged comment holds for every version."""
    out = set()
    for i, line in enumerate(source.splitlines(), 1):
        if "#" not in line:
            continue
        comment = line[line.index("#") + 1:]
        for m in _EXPECT.finditer(comment.strip()):
            if m.group("kind") != kind:
                continue
            versions = m.group("versions")
            if versions is not None and version != "any" and not matches(
                    versions, installed() if version == "installed" else version):  # type: ignore[arg-type]
                continue
            out.add((i, m.group("code"), m.group("msg").strip()))
    return out


def strip_entry_points(source: str) -> str:
    return "\n".join("" if re.match(r"^\s*#\s*wgmma-lsp:\s*trace", ln) else ln
                     for ln in source.splitlines()) + "\n"


def jax_expectations(source: str) -> set[tuple[int, str]]:
    """What JAX must raise, and where: the diagnostic's own line and message, unless a
    `# B: CODE message` comment names the line JAX blames and JAX's text (kernel-level errors,
    bare asserts, generic layout-inference failures), which the diagnostic must quote."""
    expected = expectations(source)
    blamed = expectations(source, "B")
    blamed_codes = {code for _, code, _ in blamed}
    for _, code, jax_msg in blamed:
        ours = [msg for _, c, msg in expected if c == code]
        assert ours, f"B: {code} without an E: {code}"
        if not jax_msg.startswith("(empty "):
            assert all(jax_msg in msg for msg in ours), "the diagnostic must keep JAX's text"
    return ({(ln, msg) for ln, code, msg in expected if code not in blamed_codes}
            | {(ln, msg) for ln, _, msg in blamed})


def verdict_set(verdicts: list[Verdict]) -> set[tuple[int | None, str]]:
    """JAX's verdicts as (line, message); a bare exception reads `(empty ExcType)`."""
    return {(v.line, v.message or f"(empty {v.exc_type})") for v in verdicts if v.message is not None}

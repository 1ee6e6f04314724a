"""Contexts for library code from the program: the package's tests that reach a kernel module.

A library's kernel module (tokamax's `ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py`)
has no caller in its own file: the library's op module calls it (`pallas_mosaic_gpu.py`:
`_get_kernel_module().gated_linear_unit`, `functools.partial(kernel_module.flash_attention_kernel,
..., config=config)`), and the library's tests call the op (`self._glu_fn(x, w)` with
`x = jax.random.normal(rng0, (m, k), dtype=jnp.bfloat16)` for each
`@parameterized.parameters(dict(m=256, n=256, k=64), ...)` case). Those tests are what give
the kernel concrete shapes, dtypes and the functions it is handed (the activation).

For a document inside a package, this module finds (syntax only, nothing imported):

- the op modules: the document's sibling modules that import it by name;
- the test modules: sibling `*_test.py` files that import one of the op modules;
- their test cases: every `test*` method of a `TestCase` class of the test module, its own or
  inherited (a `test_base.py` of the package), once per parameter set of its
  `@parameterized.parameters/named_parameters/product` or `@pytest.mark.parametrize`
  decorators (`entry/discover.py`).

Each case runs in the analysed document's interpreter, in a context of its own, named by the
test and its parameters: the test class is instantiated as Python does (its `__init__`, which
builds the op), `setUp` runs, then the test method with the case's arguments. Two steps of the
library's own dispatch are followed by what they mean, not by their code (`op_dispatch.py`):

- an op's `__call__` that binds its arguments and ends in `self._fwd(...)` (tokamax's
  `Op.__call__`: `inspect.Signature.bind`, pytree flattening, `custom_vjp`) runs as
  `self._fwd(*args, config=<config>, **kwargs)`, the config being the op's own `config` when
  it holds one, else each config the document's module picks (`entry/config_contexts.py`);
- the op's choice of kernel module by the GPU it runs on (`_get_kernel_module()`, `if
  isinstance(config, ConfigSM90): kernel_module = sm90`) is read as "this module": in the op
  module, a name of the analysed module read off a value the analysis cannot resolve
  (`kernel_module.flash_attention_kernel`, `sm90.Config` while `sm90` is the module being
  analysed) is the analysed module's own. The context is the op run on this module's GPU.

`run_case` is also how the document's own unittest test methods run (interpret/driver.py,
`_run_test`: JAX's own test modules, `self.kernel(...)` helpers and all), without the op dispatch.

The cases share the sweeps' step budget (the first always runs); those left out are said in a
WG903 note, as for configs. What the tests do not reach stays as before (config contexts, then
nothing known).
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import threading
from dataclasses import dataclass

from wgmma_lsp import logs
from wgmma_lsp import observed
from wgmma_lsp.bounded import put_newest
from wgmma_lsp.entry.context import Context
from wgmma_lsp.entry.discover import EntrySite, ParamSet, _test_site
from wgmma_lsp.lazy_re import LazyPattern

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable, Iterator
    from wgmma_lsp.interpret.interp import Interpreter
    from wgmma_lsp.interpret.values import ClassVal, FuncVal, Value

log = logs.logger()

MAX_TEST_MODULES = 4  # test modules read per document
MAX_CASES_PER_DOCUMENT = 24  # test cases listed per document (the budget runs fewer)
MAX_SIBLING_CHARS = 400_000  # a sibling module larger than this is not scanned


@dataclass(frozen=True)
class TestCase:
    """One test case that may reach the document: where it is, and how to run it."""

    module_path: str
    class_name: str
    method: str
    site: EntrySite
    case: ParamSet

    def context(self) -> Context:
        file = os.path.basename(self.module_path)
        origin = f"{self.class_name}.{self.method}() in {file}"
        return Context(origin, self.site.line, tuple(self.case.label), span=None, open=False)


def _module_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _parse(path: str) -> ast.Module | None:
    try:
        if observed.stat(path).st_size > MAX_SIBLING_CHARS:
            return None
        text = observed.read_text(path)
        key = (path, text)
        with _TREES_LOCK:
            tree = _TREES.get(key)
        if tree is None:
            tree = ast.parse(text)
            with _TREES_LOCK:
                put_newest(_TREES, key, tree, MAX_TREES)
        return tree
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


#: Sibling modules' syntax trees by (path, text): read on every analysis of a kernel module,
#: parsed once while unchanged (tokamax's ragged_dot op module: 8 ms an analysis); the oldest
#: dropped first. Read only (the classes a decorator hid are made from copies of their nodes).
_TREES: dict[tuple[str, str], ast.Module] = {}
_TREES_LOCK = threading.Lock()
MAX_TREES = 64


#: What a sibling module imports, by (path, size, mtime): read once, not on every keystroke
#: (the oldest dropped first, wgmma_lsp/bounded.py).
_IMPORTS: dict[tuple[str, int, int], frozenset[str]] = {}
_IMPORTS_LOCK = threading.Lock()
MAX_IMPORT_CACHE = 4_096


def _imported_names(path: str) -> frozenset[str]:
    """The last parts of the module names a file imports (`from pkg import a as x` gives `a`
    and `pkg`), read from its syntax and kept while the file is unchanged."""
    try:
        st = observed.stat(path)
    except OSError:
        return frozenset()
    key = (path, st.st_size, st.st_mtime_ns)
    with _IMPORTS_LOCK:
        hit = _IMPORTS.get(key)
    if hit is not None:
        return hit
    tree = _parse(path)
    names: set[str] = set()
    for node in _import_statements(tree.body) if tree is not None else ():
        if isinstance(node, ast.ImportFrom):
            if node.module:
                names.add(node.module.rsplit(".", 1)[-1])
            names.update(a.name for a in node.names)
        else:
            names.update(a.name.rsplit(".", 1)[-1] for a in node.names)
    found = frozenset(names)
    with _IMPORTS_LOCK:
        put_newest(_IMPORTS, key, found, MAX_IMPORT_CACHE)
    return found


def _import_statements(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every `import` statement of a block and of the blocks inside it (functions, classes,
    branches, loops, `with`, `try`, `match`): what `ast.walk` finds, without walking
    expressions, where no statement can be."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in _STATEMENT_LISTS:
            inner = getattr(node, field, None)
            if inner:
                stack.extend(reversed(inner))
        cases = getattr(node, "cases", None)  # `match`: each case's body
        if cases:
            stack.extend(reversed([s for c in cases for s in c.body]))


#: The fields of a statement that hold statements (`handlers` holds `except` clauses, each with
#: a `body`).
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers")


def test_modules(path: str) -> list[str]:
    """The sibling test modules that import an op module importing the document (sorted).
    A folder without a `*_test.py` costs one directory listing."""
    directory = os.path.dirname(os.path.abspath(path))
    me = _module_name(path)
    try:
        names = sorted(n for n in observed.listdir(directory) if n.endswith(".py"))
    except OSError:
        return []
    tests = [os.path.join(directory, n) for n in names if n.endswith("_test.py")]
    if not tests or me.endswith("_test"):
        return []
    own = os.path.abspath(path)
    ops = [_module_name(n) for n in names if not n.endswith("_test.py")
           and os.path.join(directory, n) != own and me in _imported_names(os.path.join(directory, n))]
    if not ops:
        return []
    out = [t for t in tests if any(op in _imported_names(t) for op in ops)]
    return out[:MAX_TEST_MODULES]


def _test_classes(interp: Interpreter, module: Value, path: str) -> list[ClassVal]:
    from wgmma_lsp.interpret.values import ClassVal

    names = getattr(module, "names", {})
    out = [v for v in names.values() if isinstance(v, ClassVal) and _is_test_class(v)]
    out += [c for c in _undecorated_classes(interp, names, path) if _is_test_class(c)]
    return out


def _module_env(names: dict, path: str) -> object | None:
    """The test module's own scope, reached from one of its functions or classes (its names
    hold other modules' values too)."""
    from wgmma_lsp.interpret.values import ClassVal, FuncVal

    for v in names.values():
        funcs = [v] if isinstance(v, FuncVal) else list(v.methods.values()) if isinstance(v, ClassVal) else []
        for f in funcs:
            env = getattr(f, "closure", None)
            while env is not None and env.parent is not None:
                env = env.parent
            origin = getattr(env, "origin", None)
            if origin is not None and os.path.abspath(getattr(origin, "path", "")) == os.path.abspath(path):
                return env
    return None


def _summary_env(path: str) -> object | None:
    """A scope over the test module's names, for a module with no function of its own: the
    names of its summary (read, never written: the class is made in a scope of its own below it)."""
    from wgmma_lsp.interpret.env import Env
    from wgmma_lsp.interpret.origin import active_importer

    session = active_importer()
    summary = session.summary(path, _module_name(path)) if hasattr(session, "summary") else None
    if summary is None or getattr(summary, "origin", None) is None:
        return None
    env = Env(None, summary.origin)
    env.vars = summary.names
    return env


def _undecorated_classes(interp: Interpreter, names: dict, path: str) -> list[ClassVal]:
    """Test classes a class decorator the analysis does not follow made unknown
    (`@pytest.mark.skip(reason="Too slow for OSS regression tests.")`): the class as its body
    makes it, its decorator left out. A skip marker says when the test runs, not how the op is
    called: its calls are still the library's own description of its inputs."""
    from wgmma_lsp.interpret.call import Call
    from wgmma_lsp.interpret.env import Env
    from wgmma_lsp.interpret.values import ClassVal, Unknown

    tree = _parse(path)
    if tree is None:
        return []
    wanted = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.decorator_list
              and isinstance(names.get(n.name), Unknown)]
    if not wanted:
        return []
    module_env = _module_env(names, path) or _summary_env(path)
    if module_env is None:
        return []
    out = []
    for node in wanted:
        bare = ast.ClassDef(name=node.name, bases=node.bases, keywords=node.keywords, body=node.body,
                            decorator_list=[], type_params=getattr(node, "type_params", []))
        ast.copy_location(bare, node)
        env = Env(module_env)  # type: ignore[arg-type]
        saved = interp.enter_module(module_env.origin, Call(interp, None, [], {}, [], {}, env))  # type: ignore[attr-defined]
        try:
            with interp.quiet():
                interp.exec_block([bare], env)
        finally:
            if saved is not None:
                interp.leave_module(saved)
        cls = env.vars.get(node.name)
        if isinstance(cls, ClassVal):
            out.append(cls)
    return out


def _is_test_class(cls: ClassVal) -> bool:
    from wgmma_lsp.interpret.classes import mro

    chain = mro(cls)
    bases = [b for c in chain for b in c.bases]
    return any("TestCase" in getattr(b, "name", "") or "TestCase" in type(b).__name__ for b in bases) \
        or cls.name.startswith("Test") or any(ast.unparse(b).endswith("TestCase")
                                              for c in chain for b in c.node.bases)


def test_cases(interp: Interpreter, modules: list[str]) -> list[tuple[TestCase, Value, FuncVal]]:
    """The test cases of the modules: (case, the test class, the test function)."""
    from wgmma_lsp.interpret.classes import mro
    from wgmma_lsp.interpret.origin import active_importer

    session = active_importer()
    if session is None or not hasattr(session, "module_value"):
        return []
    per_module: list[list[tuple[TestCase, Value, FuncVal]]] = []
    for path in modules:
        out: list[tuple[TestCase, Value, FuncVal]] = []
        per_module.append(out)
        module = session.module_value(path, _module_name(path))
        for cls in _test_classes(interp, module, path):
            seen: set[str] = set()
            for c in mro(cls):
                for stmt in c.node.body:
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    name = stmt.name
                    if not name.startswith("test") or name in seen:
                        continue
                    m = _method(interp, c, stmt)
                    if m is None:
                        continue
                    seen.add(name)
                    site = _method_site(m.node, cls.name)
                    for case in site.cases:
                        if len(out) < MAX_CASES_PER_DOCUMENT:
                            out.append((TestCase(path, cls.name, name, site, case), cls, m))
    # The modules' cases in turn (the first of each, then the second, ...): a test module whose
    # cases all skip here (`self.skipTest("Not supported.")` on another GPU) does not crowd out
    # the others within the listing's and the budget's limits.
    mixed = [c for group in itertools.zip_longest(*per_module) for c in group if c is not None]
    return mixed[:MAX_CASES_PER_DOCUMENT]


@functools.lru_cache(maxsize=512)  # (a node is hashed by identity, and held alive while kept)
def _method_site(node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str) -> EntrySite:
    """A test method's site (its parameter sets, read from its decorators' syntax), kept per node:
    the test modules' trees are kept while their text is unchanged (`_TREES`, program.py), and a
    site is frozen."""
    return _test_site(node, True, MAX_CASES_PER_DOCUMENT, cls)


def _method(interp: Interpreter, cls: ClassVal, node: ast.FunctionDef | ast.AsyncFunctionDef) -> FuncVal | None:
    """The test method `node` of `cls`: the class's own value, or, when a decorator the
    analysis does not follow (`@parameterized.parameters(...)`) made it unknown, the function
    itself, closing over the class's module (the cases are read from the decorator's syntax)."""
    from wgmma_lsp.interpret.values import FuncVal

    m = cls.methods.get(node.name)
    if isinstance(m, FuncVal) and m.node is node:
        return m
    closure = next((v.closure for v in cls.methods.values()  # what the class's methods close over
                    if isinstance(v, FuncVal) and v.closure is not None), None)
    if closure is None:
        return None
    a = node.args
    with interp.quiet():
        defaults = tuple(interp.eval(d, closure) for d in a.defaults)
        kw_defaults = {p.arg: interp.eval(d, closure) for p, d in zip(a.kwonlyargs, a.kw_defaults)
                       if d is not None}
    return FuncVal(node, closure, node.name, defaults, kw_defaults)


def run_case(interp: Interpreter, context: Context, method_name: str, params: ParamSet, cls: Value,
             method: FuncVal, configs: list[Value] | None = None,
             no_instance: Callable[[list[Value], dict[str, Value]], None] | None = None) -> None:
    """A test case as unittest runs it, in `context`: its class instantiated (`cls(method_name)`),
    `setUp`, the method with the case's arguments (`params`, read in the method's scope, where
    its decorators were). With `configs`, a library's op calls are dispatched to `_fwd` with
    each of them (op_dispatch.py: a package's tests of a kernel module). Where the instance
    cannot be made (a class the interpreter cannot instantiate), `no_instance(args, kwargs)`
    runs instead, in the same context (the document's own tests: the method with an unknown
    `self`), or nothing."""
    from wgmma_lsp.interpret.call import Call
    from wgmma_lsp.interpret.classes import instance_attr
    from wgmma_lsp.interpret.followon import Untraced, plain_test
    from wgmma_lsp.interpret.values import UNKNOWN, ClassVal, Const, FuncVal, InstanceVal

    env = method.closure
    previous = interp.program_hooks
    if configs is not None:
        from wgmma_lsp.entry.op_dispatch import ProgramHooks

        interp.program_hooks = ProgramHooks(interp, configs)
    try:
        with interp.in_context(context), Untraced(interp, plain_test(method.node)):  # (run by pytest)
            inst = interp.instantiate(cls, Call(interp, None, [Const(method_name)], {}, [None], {}, env)) \
                if isinstance(cls, ClassVal) else UNKNOWN
            with interp.quiet():
                args = [interp.eval(a, env) for a in params.args]
                kwargs = {k: interp.eval(v, env) for k, v in params.kwargs}
            if not isinstance(inst, InstanceVal):
                if no_instance is not None:
                    no_instance(args, kwargs)
                return
            setup = instance_attr(interp, inst, "setUp")
            if isinstance(setup, FuncVal):
                interp.call_value(setup, Call(interp, None, [], {}, [], {}, env))
            interp.call_user(method, Call(interp, None, [inst, *args], kwargs, [None] * (len(args) + 1), {}, env))
    finally:
        interp.program_hooks = previous


def uses_mosaic_gpu(interp: Interpreter) -> bool:
    """Whether the document's module binds Mosaic GPU's API (`plgpu`, `mgpu`, a name from them):
    only then can a test context find anything (a TPU or plain jnp module: no rule applies)."""
    from wgmma_lsp.interpret.values import ApiVal, ModuleVal

    for v in interp.module_env.vars.values():
        name = v.name if isinstance(v, (ModuleVal, ApiVal)) else None
        if name is not None and (name in ("plgpu", "mgpu") or name.startswith(("plgpu.", "mgpu."))):
            return True
    return False


def breadth_first(cases: list) -> list:
    """The order test cases run in (the first always runs; the budget may stop the others): one
    case of each test method before a second of any, since distinct tests reach distinct parts of
    a kernel (a causal mask, residuals) and a method's parameter sets mostly vary its values; a
    parameterized method's first case before a plain test's, as a library writes those to reach
    its kernels with concrete shapes. Within a method, the cases keep their order."""
    by_method: dict[tuple, list] = {}
    for c in cases:
        by_method.setdefault((id(c[1]), c[0].method), []).append(c)
    methods = sorted(by_method.values(), key=lambda cs: not cs[0][0].case.label)  # (stable)
    out: list = []
    for i in range(max((len(cs) for cs in methods), default=0)):
        out.extend(cs[i] for cs in methods if i < len(cs))
    return out


def run_test_contexts(interp: Interpreter, run_piece: Callable[[str, Callable[[], None]], None],
                      note: Callable[[str], None],
                      configs_for: Callable[[], list[Value]]) -> int:
    """Run the package's test cases that may reach the document; how many ran."""
    if not interp.path or not uses_mosaic_gpu(interp):
        return 0
    modules = test_modules(interp.path)
    if not modules:
        return 0
    found: list = []
    configs: list[Value] = []

    def discover() -> None:  # (a piece: what goes wrong here is said, as in any other code)
        found.extend(breadth_first(test_cases(interp, modules)))
        if found:
            configs.extend(configs_for())
    run_piece("the package's tests", discover)
    cases = found
    if not cases:
        return 0
    done = 0
    for case, cls, method in cases:
        if done and interp.sweep_steps >= interp.sweep_budget:
            break
        start = interp.steps
        run_piece(case.context().origin,
                  lambda case=case, cls=cls, method=method: run_case(interp, case.context(), case.method,
                                                                     case.case, cls, method, configs))
        interp.sweep_steps += max(0, interp.steps - start)
        done += 1
    if done < len(cases):
        note(f"checked {done} of {len(cases)} test cases of this package that may reach this module; "
             "the analysis budget left out the others")
        # What the hover pass may run for lines no context reached (interpret/driver.py).
        interp.unrun_test_cases = [UnrunCase(case.context().origin, case, cls, method, configs)
                                   for case, cls, method in cases[done:]]
    log.info("%s: ran %d test cases of %s", interp.path, done, ", ".join(map(os.path.basename, modules)))
    return done


@dataclass
class UnrunCase:
    """A test case the budget left out: what the hover pass needs to choose and run it (no
    reference to the interpreter: an analysis stays free of cycles through it)."""

    label: str
    case: TestCase
    cls: ClassVal
    method: FuncVal
    configs: list[Value]

    def run(self, interp: Interpreter) -> None:
        run_case(interp, self.case.context(), self.case.method, self.case.case, self.cls, self.method,
                 self.configs)

    def words(self) -> set[str]:
        """The words of the identifiers, keywords and strings the test method and its
        parameters mention (`test_causal_mask`, `impl_kwargs=dict(is_causal=True)`)."""
        out = words_of(self.case.method)
        nodes = [self.method.node, *self.case.case.args, *(v for _, v in self.case.case.kwargs)]
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Name):
                    out |= words_of(n.id)
                elif isinstance(n, ast.Attribute):
                    out |= words_of(n.attr)
                elif isinstance(n, ast.keyword) and n.arg:
                    out |= words_of(n.arg)
                elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 80:
                    out |= words_of(n.value)
        return out


#: Words too common in test and kernel code to tell one test from another.
_COMMON_WORDS = frozenset({"test", "self", "none", "not", "and", "the", "get", "has", "use", "num",
                           "len", "shape", "dtype", "size", "config", "args", "kwargs", "isinstance",
                           "jax", "jnp", "lax", "int", "float", "bfloat", "bool", "max", "min", "map",
                           "array"})


_WORD_RE = LazyPattern(r"[A-Z]?[a-z]+|[0-9]+")


def words_of(identifier: str) -> set[str]:
    """`is_causal` -> {"causal"}; `testCausalMask` -> {"causal", "mask"}."""
    parts = _WORD_RE.findall(identifier)
    return {w.lower() for w in parts if len(w) >= 3 and w.lower() not in _COMMON_WORDS}


def first_configs(interp: Interpreter) -> list[Value]:
    """The config each module-level function of the document taking a config class is first
    run with (entry/config_contexts.py), one per config class: what the op picks when the test
    gives none (`get_heuristics_config`), else the class's defaults."""
    from wgmma_lsp.entry.config_contexts import config_contexts

    out: list[Value] = []
    classes: set[int] = set()
    funcs = sorted((f for f in interp.defined.values() if f.closure is interp.module_env
                    and not isinstance(f.node, ast.Lambda)), key=lambda f: f.node.lineno)
    for f in funcs:
        found, _ = config_contexts(interp, f)
        for c in found:
            cls = getattr(c.config, "cls", None)
            if cls is not None and id(cls) not in classes:
                classes.add(id(cls))
                out.append(c.config)
    return out


def run_package_tests(interp: Interpreter, pieces: object) -> int:
    """The driver's step: the package's test cases that may reach the document, each a piece
    (interpret/incomplete.py) in its own context."""
    from wgmma_lsp.spans import Span

    span = Span(0, 0, 0, len(interp.lines.lines[0]) if interp.lines.lines else 0)

    def run_piece(label: str, thunk: Callable[[], None]) -> None:
        pieces.run(span, f"`{label}`", thunk)  # type: ignore[attr-defined]

    def note(msg: str) -> None:
        interp.notes.append((span, msg))

    return run_test_contexts(interp, run_piece, note, lambda: first_configs(interp))

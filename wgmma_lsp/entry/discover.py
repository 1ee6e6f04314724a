"""Entry points a program makes itself, found in the syntax tree (nothing is executed).

- `if __name__ == "__main__":` blocks at module level (they call `main()`, `app.run(main)`, or
  trace kernels directly);
- pytest test functions (`def test_*` in the module or in a `Test*` class), once per parameter
  set of their `@pytest.mark.parametrize` decorators (stacked decorators multiply);
- absl tests (`parameterized.TestCase` / `absltest.TestCase` methods named `test*`), once per
  `@parameterized.parameters(...)`, `named_parameters(...)` or `product(...)` case.

A test class is a module-level class named `Test*`, one a base of which is written `...TestCase`,
or a subclass of a test class of the module, however deep (JAX's own tests: `class
PallasTest(jtu.JaxTestCase, metaclass=...)` with helpers, `class PallasCallTest(PallasTest, ...)`
with the tests, `class PallasCallWGTest(PallasCallTest, lowering_semantics=...)` with none of its
own). Each test class runs the test methods it has, its own and those its module-defined bases
give it by Python's method resolution order (C3 over the bases the module defines; a base
defined elsewhere gives none the analysis knows): a test one class inherits from another runs
once in each, as the test runner runs it, each its own site named by the class
(`PallasCallWGTest.test_x()`, `inherited`). A class is a unittest `TestCase` (`unittest`: its
tests run with an instance, `entry/test_contexts.run_case`) when one of its bases, or of its
module-defined bases', is written `...TestCase`.

Parameter values stay syntax (`ast.expr`): the interpreter evaluates them in the module's
namespace. Each site lists at most `max_cases` parameter sets and says how many it dropped.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field, replace

MAX_CASES = 16


@dataclass(frozen=True)
class ParamSet:
    """One set of test parameters: positional and keyword argument syntax, and its label."""

    args: tuple[ast.expr, ...] = ()
    kwargs: tuple[tuple[str, ast.expr], ...] = ()
    label: tuple[tuple[str, str], ...] = ()  # ("tile_m", "256") as written


@dataclass(frozen=True)
class EntrySite:
    """A place the program enters itself: a `__main__` block or a test."""
    kind: str  # "main-block", "test"
    name: str  # how labels name it: "the __main__ block", "test_matmul()"
    line: int  # 0-based
    node: ast.AST = field(compare=False)  # the `if` statement or the test's FunctionDef
    method: bool = False  # a test method (bound to an unknown `self`)
    cases: tuple[ParamSet, ...] = (ParamSet(),)
    dropped: int = 0  # parameter sets left out by the budget
    # A test method's class (the one the test runs in), its statement, and whether it is a
    # unittest `TestCase` (run with an instance) or inherits the method from another class.
    cls: str | None = None
    class_node: ast.ClassDef | None = field(default=None, compare=False)
    unittest: bool = False
    inherited: bool = False


def discover(tree: ast.Module, max_cases: int = MAX_CASES) -> list[EntrySite]:
    """The entry sites of a module, in source order (a class's inherited tests after its own)."""
    out: list[EntrySite] = []
    classes: dict[str, _ClassInfo] = {}  # the module's classes by name, as bound so far
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and is_main_test(stmt.test):
            out.append(EntrySite("main-block", "the __main__ block", stmt.lineno - 1, stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            out.append(_test_site(stmt, False, max_cases))
        elif isinstance(stmt, ast.ClassDef):
            info = _class_info(stmt, classes)
            classes[stmt.name] = info
            if not info.test:
                continue
            for _, fn in _test_methods(info):
                site = _test_site(fn, True, max_cases, stmt.name)
                out.append(replace(site, cls=stmt.name, class_node=stmt, unittest=info.unittest,
                                   inherited=fn not in stmt.body))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)):
            for name in _bound_names(stmt):  # (a class name bound to something else)
                classes.pop(name, None)
    return out


@dataclass(frozen=True, eq=False)  # (compared by identity: one per class statement)
class _ClassInfo:
    """A module-level class as discovery sees it: its statement, its bases the module defines
    (as bound where the class statement runs), and what it is."""

    node: ast.ClassDef
    bases: tuple[_ClassInfo, ...]
    test: bool  # a test class: its tests run
    unittest: bool  # a unittest TestCase


def _class_info(node: ast.ClassDef, classes: dict[str, _ClassInfo]) -> _ClassInfo:
    own = tuple(classes[b.id] for b in node.bases if isinstance(b, ast.Name) and b.id in classes)
    written = any(ast.unparse(b).endswith("TestCase") for b in node.bases)
    unittest = written or any(b.unittest for b in own)
    test = node.name.startswith("Test") or written or any(b.test for b in own)
    return _ClassInfo(node, own, test, unittest)


def _mro(info: _ClassInfo) -> list[_ClassInfo]:
    """The class and its module-defined bases in Python's method resolution order (C3; where
    there is none, CPython raises a TypeError: this order, unchecked)."""
    seqs = [_mro(b) for b in info.bases] + [list(info.bases)]
    out = [info]
    while True:
        seqs = [q for q in seqs if q]
        if not seqs:
            return out
        head = next((q[0] for q in seqs if not any(q[0] in t[1:] for t in seqs)), None)
        if head is None:
            for q in seqs:
                out.extend(c for c in q if c not in out)
            return out
        out.append(head)
        seqs = [t[1:] if t[0] is head else t for t in seqs]


def _test_methods(info: _ClassInfo) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The test methods a class has: its own, in order, then those it inherits (each name from
    the first class of its MRO that binds it, a method or not)."""
    seen: set[str] = set()
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for c in _mro(info):
        for item in c.node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [item.name]
            elif isinstance(item, (ast.Assign, ast.AnnAssign, ast.ClassDef)):
                names = list(_bound_names(item))
            else:
                continue
            for name in names:
                if name in seen:
                    continue
                seen.add(name)
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and name.startswith("test"):
                    out.append((name, item))
    return out


def _bound_names(stmt: ast.stmt) -> list[str]:
    """The names a statement binds at its own level (assignment targets, a class, imports)."""
    if isinstance(stmt, ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]  # type: ignore[attr-defined]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def _test_site(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool, max_cases: int,
               cls: str | None = None) -> EntrySite:
    params = [a.arg for a in list(fn.args.posonlyargs) + list(fn.args.args)]
    if method and params:
        params = params[1:]  # self
    axes: list[list[ParamSet]] = []
    for dec in reversed(fn.decorator_list):  # the innermost decorator varies fastest
        cases = _decorator_cases(dec, params)
        if cases is not None:
            axes.append(cases)
    name = f"{cls}.{fn.name}()" if cls else f"{fn.name}()"
    if not axes:
        return EntrySite("test", name, fn.lineno - 1, fn, method)
    total = 1
    for a in axes:
        total *= len(a)
    combos = []
    for combo in itertools.islice(itertools.product(*reversed(axes)), max_cases):
        args: tuple[ast.expr, ...] = ()
        kwargs: tuple[tuple[str, ast.expr], ...] = ()
        label: tuple[tuple[str, str], ...] = ()
        for ps in combo:
            args += ps.args
            kwargs += ps.kwargs
            label += ps.label
        combos.append(ParamSet(args, kwargs, label))
    return EntrySite("test", name, fn.lineno - 1, fn, method, tuple(combos), total - len(combos))


def _call_name(node: ast.expr) -> str:
    return ast.unparse(node.func) if isinstance(node, ast.Call) else ""


def _decorator_cases(dec: ast.expr, params: list[str]) -> list[ParamSet] | None:
    name = _call_name(dec)
    if not name:
        return None
    assert isinstance(dec, ast.Call)
    tail = name.rsplit(".", 1)[-1]
    if tail == "parametrize" and "mark" in name:
        return _pytest_cases(dec)
    if "parameterized" in name or name in ("parameters", "named_parameters", "product"):
        if tail == "parameters":
            return _absl_cases(dec.args, params, named=False)
        if tail == "named_parameters":
            return _absl_cases(dec.args, params, named=True)
        if tail == "product":
            return _absl_product(dec)
    return None


def _literal_items(node: ast.expr) -> list[ast.expr] | None:
    """The items of a parameter list as syntax: a list or tuple display, or `range(...)` of
    integer constants (`list(range(4))`, `tuple(range(1, 9, 2))`), whose items are constants."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    if isinstance(node, ast.Call) and _call_name(node) in ("list", "tuple") and len(node.args) == 1 \
            and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Call) and _call_name(node) == "range" and 1 <= len(node.args) <= 3 \
            and not node.keywords and all(isinstance(a, ast.Constant) and type(a.value) is int
                                          for a in node.args):
        r = range(*[a.value for a in node.args])  # type: ignore[attr-defined]
        if len(r) <= MAX_RANGE:
            return [ast.copy_location(ast.Constant(i), node) for i in r]
    return None


MAX_RANGE = 1_000  # items of a `range(...)` parameter list read (a longer one: not read)


def _text(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:39] + "…"


def _pytest_cases(dec: ast.Call) -> list[ParamSet] | None:
    if len(dec.args) < 2:
        return None
    names_node, values_node = dec.args[0], dec.args[1]
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
    elif isinstance(names_node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts):
        names = [e.value for e in names_node.elts]  # type: ignore[attr-defined]
    else:
        return None
    values = _literal_items(values_node)
    if values is None:
        return None
    out = []
    for v in values:
        if isinstance(v, ast.Call) and _call_name(v).endswith("param"):
            v = ast.Tuple(elts=list(v.args), ctx=ast.Load()) if len(names) > 1 else (
                v.args[0] if v.args else v)
        if len(names) == 1:
            items = [v]
        else:
            items_ = _literal_items(v)
            if items_ is None or len(items_) != len(names):
                return None
            items = items_
        out.append(ParamSet((), tuple(zip(names, items)),
                            tuple((n, _text(i)) for n, i in zip(names, items))))
    return out


def _absl_cases(cases: list[ast.expr], params: list[str], named: bool) -> list[ParamSet] | None:
    out = []
    spread: list[ast.expr] = []
    for case in cases:  # `parameters(*range(3))`, `parameters(*[(1, 2), (3, 4)])`: their items
        if isinstance(case, ast.Starred):
            items = _literal_items(case.value)
            if items is None:
                return None
            spread.extend(items)
        else:
            spread.append(case)
    for case in spread:
        if isinstance(case, ast.Call) and _call_name(case) == "dict" and not case.args:
            kw = [(k.arg, k.value) for k in case.keywords if k.arg and k.arg != "testcase_name"]
            if any(k.arg is None for k in case.keywords):
                return None
            out.append(ParamSet((), tuple(kw), tuple((k, _text(v)) for k, v in kw)))
        elif isinstance(case, ast.Dict) and all(isinstance(k, ast.Constant) for k in case.keys):
            kw = [(k.value, v) for k, v in zip(case.keys, case.values)  # type: ignore[union-attr]
                  if k.value != "testcase_name"]  # type: ignore[union-attr]
            out.append(ParamSet((), tuple(kw), tuple((k, _text(v)) for k, v in kw)))
        elif isinstance(case, (ast.Tuple, ast.List)):
            items = list(case.elts)
            if named:
                items = items[1:]  # the test case name
            label = tuple((params[i] if i < len(params) else f"#{i}", _text(v))
                          for i, v in enumerate(items))
            out.append(ParamSet(tuple(items), (), label))
        elif not named and len(params) >= 1:
            out.append(ParamSet((case,), (), ((params[0], _text(case)),)))
        else:
            return None
    return out


def _absl_product(dec: ast.Call) -> list[ParamSet] | None:
    axes = []
    for k in dec.keywords:
        items = _literal_items(k.value) if k.arg else None
        if items is None:
            return None
        axes.append([(k.arg, v) for v in items])
    texts: dict[int, str] = {}  # id(item) -> its label text (an item is in many combinations)
    out = []
    for combo in itertools.islice(itertools.product(*axes), MAX_CASES * 4):
        label = []
        for k, v in combo:  # type: ignore[misc]
            text = texts.get(id(v))
            if text is None:
                text = texts[id(v)] = _text(v)
            label.append((k, text))
        out.append(ParamSet((), tuple(combo), tuple(label)))  # type: ignore[misc]
    return out

"""Entry points a program makes itself, found in the syntax tree (nothing is executed).

- `if __name__ == "__main__":` blocks at module level (they call `main()`, `app.run(main)`, or
  trace kernels directly);
- pytest test functions (`def test_*` in the module or in a `Test*` class), once per parameter
  set of their `@pytest.mark.parametrize` decorators (stacked decorators multiply);
- absl tests (`parameterized.TestCase` / `absltest.TestCase` methods named `test*`), once per
  `@parameterized.parameters(...)`, `named_parameters(...)` or `product(...)` case.

Parameter values stay syntax (`ast.expr`): the interpreter evaluates them in the module's
namespace. Each site lists at most `max_cases` parameter sets and says how many it dropped.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field

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


def discover(tree: ast.Module, max_cases: int = MAX_CASES) -> list[EntrySite]:
    """The entry sites of a module, in source order."""
    out: list[EntrySite] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and is_main_test(stmt.test):
            out.append(EntrySite("main-block", "the __main__ block", stmt.lineno - 1, stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            out.append(_test_site(stmt, False, max_cases))
        elif isinstance(stmt, ast.ClassDef) and _is_test_class(stmt):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    out.append(_test_site(item, True, max_cases, stmt.name))
    return out


def is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def _is_test_class(node: ast.ClassDef) -> bool:
    if node.name.startswith("Test"):
        return True
    for base in node.bases:
        text = ast.unparse(base)
        if text.endswith("TestCase"):
            return True
    return False


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

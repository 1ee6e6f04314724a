"""Pure-Python programs for the differential test (CPython is the spec) and its benchmark.

`programs()` is a hypothesis strategy of module sources: typed random expressions and
statements (ints, bools, strings, tuples, lists, dicts; arithmetic, comparisons, `if`/`for`/
`while`, comprehensions, function definitions and calls with defaults, `*args`/`**kwargs`,
closures, classes) and the shapes of real kernel code (configs as dataclasses, `NamedTuple`s,
enums and plain classes with properties; shape arithmetic like `tile_m * 2 // num_stages`;
helper chains; `math.prod`, `functools.reduce`). Every program is built to run in CPython
without an exception (divisors and shift counts are made positive, indexes are reduced modulo
the length), so that nearly every program generated is compared.

`run_cpython` executes one in a fresh namespace (these are our own generated programs, not
user code); `run_interpreter` runs the same text through wgmma-lsp's abstract interpreter as
module code; `compare` walks each name both bind and says where the interpreter's claimed value
differs from CPython's (an unknown value, or an unknown part of one, claims nothing).
"""

from __future__ import annotations

import ast
import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import strategies as st

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.interp import Interpreter
from wgmma_lsp.interpret.values import Const, DictVal, SetVal, TupleVal, Value
from wgmma_lsp.spans import LineIndex

HEADER = "import dataclasses\nimport enum\nimport functools\nimport itertools\nimport math\nimport typing\n"
NO_CLAIM = object()


# -- the generator ------------------------------------------------------------------------------

class _Gen:
    """Typed expressions over the names bound so far (name -> type: int, bool, str, list, tuple,
    dict), drawn from hypothesis."""

    def __init__(self, pick: Callable[[int, int], int]) -> None:
        self.pick = pick  # an int in [lo, hi]: a hypothesis draw, or a seeded random's
        self.names: dict[str, str] = {}
        self.n = 0

    def choice(self, options: list) -> Any:
        return options[self.pick(0, len(options) - 1)]

    def small(self, lo: int = -4, hi: int = 12) -> int:
        return self.pick(lo, hi)

    def fresh(self, kind: str) -> str:
        self.n += 1
        return f"v{self.n}"

    def var(self, kind: str) -> str | None:
        names = [n for n, k in self.names.items() if k == kind]
        return self.choice(names) if names else None

    # expressions, by type
    def int_(self, d: int = 2) -> str:
        v = self.var("int")
        leaf = [str(self.small())] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        a, b = self.int_(d - 1), self.int_(d - 1)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"({a} {self.choice(['+', '-', '*'])} {b})",
            lambda: f"({a} // (abs({b}) + 1))",
            lambda: f"({a} % (abs({b}) + 1))",
            lambda: f"({a} ** (abs({b}) % 3))",
            lambda: f"({a} << (abs({b}) % 4))",
            lambda: f"({a} >> (abs({b}) % 4))",
            lambda: f"({a} {self.choice(['&', '|', '^'])} {b})",
            lambda: f"(-{a})",
            lambda: f"abs({a})",
            lambda: f"{self.choice(['min', 'max'])}({a}, {b})",
            lambda: f"len({self.list_(d - 1)})",
            lambda: f"len({self.str_(d - 1)})",
            lambda: f"({a} if {self.bool_(d - 1)} else {b})",
            lambda: f"int({self.bool_(d - 1)})",
            lambda: f"sum({self.list_(d - 1)})",
            lambda: f"math.prod({self.tuple_(d - 1)})",
            lambda: f"divmod({a}, abs({b}) + 1)[{self.small(0, 1)}]",
            lambda: f"-(-{a} // (abs({b}) + 1))",
            lambda: self._index(d),
            lambda: f"functools.reduce(lambda x, y: x {self.choice(['+', '*', '-'])} y, {self.list_(d - 1)}, {b})",
            lambda: f"{self.dict_(d - 1)}.get({self.choice(self._keys())!r}, {a})",
            lambda: f"round({a} / (abs({b}) + 1))",
            lambda: f"int({a} / (abs({b}) + 1))",
            lambda: f"math.ceil({a} / (abs({b}) + 1))",
            lambda: f"len(range({a}, {b}))",
            lambda: f"sorted({self.list_(d - 1)} + [{a}])[0]",
            lambda: f"({a}).bit_length()",
        ]
        return self.choice(forms)()

    def _index(self, d: int) -> str:
        seq = self.list_(d - 1)
        i = self.int_(d - 1)
        return f"({seq} + [0])[{i} % (len({seq}) + 1)]"

    def _keys(self) -> list[str]:
        return ["a", "b", "c", "tile_m", "num_stages"]

    def bool_(self, d: int = 2) -> str:
        v = self.var("bool")
        leaf = [self.choice(["True", "False"])] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        a, b = self.int_(d - 1), self.int_(d - 1)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"({a} {self.choice(['<', '<=', '>', '>=', '==', '!='])} {b})",
            lambda: f"({a} < {b} <= {self.int_(d - 1)})",
            lambda: f"(not {self.bool_(d - 1)})",
            lambda: f"({self.bool_(d - 1)} {self.choice(['and', 'or'])} {self.bool_(d - 1)})",
            lambda: f"({a} in {self.list_(d - 1)})",
            lambda: f"({a} not in {self.tuple_(d - 1)})",
            lambda: f"({self.str_(d - 1)} == {self.str_(d - 1)})",
            lambda: f"({self.choice(self._keys())!r} in {self.dict_(d - 1)})",
            lambda: f"bool({a})",
            lambda: f"({self.list_(d - 1)} == {self.list_(d - 1)})",
            lambda: f"({self.tuple_(d - 1)} < {self.tuple_(d - 1)})",
            lambda: f"{self.choice(['all', 'any'])}({self.list_(d - 1)})",
            lambda: f"isinstance({a}, int)",
        ]
        return self.choice(forms)()

    def str_(self, d: int = 2) -> str:
        v = self.var("str")
        leaf = [repr(self.choice(["", "a", "bf16", "tile", "x_y"]))] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"({self.str_(d - 1)} + {self.str_(d - 1)})",
            lambda: f"({self.str_(d - 1)} * (abs({self.int_(d - 1)}) % 3))",
            lambda: f"str({self.int_(d - 1)})",
            lambda: f"{self.str_(d - 1)}.upper()",
            lambda: f"{self.str_(d - 1)}[{self.small(0, 3)}:]",
            lambda: f"'_'.join([{self.str_(d - 1)}, {self.str_(d - 1)}])",
            lambda: f"f'{{{self.int_(d - 1)}}}x'",
            lambda: f"({self.str_(d - 1)} if {self.bool_(d - 1)} else {self.str_(d - 1)})",
            lambda: f"{self.str_(d - 1)}.replace('a', 'b')",
        ]
        return self.choice(forms)()

    def list_(self, d: int = 2) -> str:
        v = self.var("list")
        n = self.small(0, 3)
        leaf = [f"[{', '.join(self.int_(0) for _ in range(n))}]"] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"[{', '.join(self.int_(d - 1) for _ in range(n))}]",
            lambda: f"({self.list_(d - 1)} + {self.list_(d - 1)})",
            lambda: f"({self.list_(d - 1)} * {self.small(0, 2)})",
            lambda: f"{self.list_(d - 1)}[{self.small(-2, 2)}:{self.small(-1, 3)}]",
            lambda: f"list({self.tuple_(d - 1)})",
            lambda: f"list(range({self.small(0, 5)}))",
            lambda: f"list(range({self.small(-3, 3)}, {self.small(0, 8)}, {self.choice([1, 2, 3, -1])}))",
            lambda: f"[x {self.choice(['+', '*', '-'])} {self.int_(0)} for x in {self.list_(d - 1)}]",
            lambda: f"[x for x in {self.list_(d - 1)} if x % 2]",
            lambda: f"[x * y for x in {self.list_(0)} for y in {self.list_(0)}]",
            lambda: f"sorted({self.list_(d - 1)})",
            lambda: f"sorted({self.list_(d - 1)}, reverse=True)",
            lambda: f"list(reversed({self.list_(d - 1)}))",
            lambda: f"[i for i, _ in enumerate({self.list_(d - 1)})]",
            lambda: f"[a + b for a, b in zip({self.list_(d - 1)}, {self.list_(d - 1)})]",
            lambda: f"list(map(abs, {self.list_(d - 1)}))",
            lambda: f"list({self.dict_(d - 1)}.values())",
            lambda: f"[*{self.list_(d - 1)}, {self.int_(0)}]",
        ]
        return self.choice(forms)()

    def tuple_(self, d: int = 2) -> str:
        v = self.var("tuple")
        n = self.small(0, 3)
        items = [self.int_(max(d - 1, 0)) for _ in range(n)]
        lit = "()" if n == 0 else f"({', '.join(items)},)"
        leaf = [lit] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"({self.tuple_(d - 1)} + {self.tuple_(d - 1)})",
            lambda: f"tuple({self.list_(d - 1)})",
            lambda: f"{self.tuple_(d - 1)}[1:]",
            lambda: f"tuple(x * 2 for x in {self.tuple_(d - 1)})",
            lambda: f"divmod({self.int_(d - 1)}, {self.small(1, 5)})",
            lambda: f"(*{self.tuple_(d - 1)}, {self.int_(0)})",
        ]
        return self.choice(forms)()

    def dict_(self, d: int = 2) -> str:
        v = self.var("dict")
        n = self.small(0, 3)
        keys = [self.choice(self._keys()) for _ in range(n)]
        lit = "{" + ", ".join(f"{k!r}: {self.int_(0)}" for k in keys) + "}"
        leaf = [lit] + ([v] if v else [])
        if d <= 0:
            return self.choice(leaf)
        forms = [
            lambda: self.choice(leaf),
            lambda: f"{{**{self.dict_(d - 1)}, **{self.dict_(d - 1)}}}",
            lambda: f"dict({', '.join(f'{k}={self.int_(0)}' for k in dict.fromkeys(keys))})",
            lambda: f"dict({self.dict_(d - 1)}, tile_m={self.int_(0)})",
            lambda: f"{{k: x * 2 for k, x in {self.dict_(d - 1)}.items()}}",
            lambda: f"{{k: {self.int_(0)} for k in {self.list_of_keys()}}}",
        ]
        return self.choice(forms)()

    def list_of_keys(self) -> str:
        return repr([self.choice(self._keys()) for _ in range(self.small(0, 3))])

    def expr(self, kind: str, d: int = 2) -> str:
        return getattr(self, kind + "_")(d)


KINDS = ["int", "bool", "str", "list", "tuple", "dict"]


def _assign(g: _Gen, lines: list[str], indent: str = "") -> None:
    kind = g.choice(KINDS)
    name = g.fresh(kind)
    lines.append(f"{indent}{name} = {g.expr(kind, g.small(0, 2))}")
    g.names[name] = kind


def _statement(g: _Gen, lines: list[str]) -> None:
    """One top-level statement (or a few) of a random shape."""
    shape = g.choice(["assign", "assign", "if", "for", "while", "mutate", "aug", "unpack", "func",
                      "closure", "varargs", "class", "comprehension", "helpers", "aliasing",
                      "heuristics", "try", "generators", "sets", "match", "operators", "builtins"])
    if shape == "assign":
        _assign(g, lines)
    elif shape == "if":
        name = g.fresh("int")
        lines += [f"if {g.bool_()}:", f"    {name} = {g.int_()}",
                  f"elif {g.bool_()}:", f"    {name} = {g.int_()}",
                  "else:", f"    {name} = {g.int_()}"]
        g.names[name] = "int"
    elif shape == "for":
        acc, x = g.fresh("int"), g.fresh("int")
        cut = g.choice(["", f"    if {x} > {g.small(0, 6)}:\n        break",
                        f"    if {x} % 2:\n        continue"])
        lines += [f"{acc} = {g.int_(1)}", f"for {x} in {g.list_(1)}:"]
        if cut:
            lines += cut.split("\n")
        lines += [f"    {acc} = {acc} * 2 + {x}"]
        lines += ["else:", f"    {acc} += 1"] if g.small(0, 3) == 0 else []
        g.names[acc] = "int"
    elif shape == "while":
        i, acc = g.fresh("int"), g.fresh("int")
        lines += [f"{i} = 0", f"{acc} = {g.int_(1)}", f"while {i} < {g.small(0, 6)}:",
                  f"    {acc} = {acc} + {i} * {g.small()}", f"    {i} += 1"]
        g.names[i] = "int"
        g.names[acc] = "int"
    elif shape == "mutate":
        lst, dct = g.fresh("list"), g.fresh("dict")
        alias = g.fresh("list")
        lines += [f"{lst} = {g.list_(1)}", f"{alias} = {lst}"]
        for _ in range(g.small(1, 3)):
            lines.append(g.choice([
                f"{alias}.append({g.int_(1)})", f"{lst}.extend({g.list_(1)})",
                f"{lst}.insert({g.small(-2, 3)}, {g.int_(0)})",
                f"{lst} += [{g.int_(0)}]", f"{alias}.reverse()", f"{lst}.sort()",
                f"if {lst}:\n    {lst}.pop()", f"if len({lst}) > 1:\n    {lst}[1] = {g.int_(0)}",
                f"{alias}.clear()", f"if {g.bool_(1)}:\n    {lst}.append(1)",
                f"{lst} *= {g.small(0, 3)}", f"del {alias}[0:1]", f"{alias}.extend(range({g.small(0, 3)}))",
                f"if {lst}:\n    {lst}.remove({lst}[-1])",
            ]))
        lines += [f"{dct} = {g.dict_(1)}"]
        for _ in range(g.small(1, 3)):
            lines.append(g.choice([
                f"{dct}[{g.choice(g._keys())!r}] = {g.int_(1)}",
                f"{dct}.update({g.dict_(1)})", f"{dct}.update(tile_m={g.int_(0)})",
                f"{dct}.setdefault({g.choice(g._keys())!r}, {g.int_(0)})",
                f"{dct}.pop({g.choice(g._keys())!r}, None)",
                f"if {g.bool_(1)}:\n    {dct}['c'] = 5", f"{dct} |= {g.dict_(1)}",
                f"if 'a' in {dct}:\n    del {dct}['a']",
            ]))
        lines += [f"{g.fresh('int')} = len({alias})"]
        g.names[f"v{g.n}"] = "int"
        g.names[lst] = "list"
        g.names[alias] = "list"
        g.names[dct] = "dict"
    elif shape == "aug":
        name = g.fresh("int")
        lines += [f"{name} = {g.int_(1)}",
                  f"{name} {g.choice(['+=', '-=', '*=', '|=', '^='])} {g.int_(1)}"]
        g.names[name] = "int"
    elif shape == "unpack":
        a, b, c = g.fresh("int"), g.fresh("int"), g.fresh("list")
        lines += [f"{a}, {b} = {g.int_(1)}, {g.int_(1)}", f"{a}, {b} = {b}, {a}",
                  f"{a}, *{c} = [{g.int_(0)}, {g.int_(0)}, {g.int_(0)}]"]
        g.names.update({a: "int", b: "int", c: "list"})
    elif shape == "func":
        f, r1, r2 = g.fresh("f"), g.fresh("int"), g.fresh("int")
        k = g.small(1, 4)
        lines += [f"def {f}(a, b={g.small()}, *, scale={g.small(1, 3)}):",
                  "    if a > b:", "        return (a - b) * scale",
                  f"    c = a * {k} + b", "    return c // scale",
                  f"{r1} = {f}({g.int_(1)})", f"{r2} = {f}({g.int_(1)}, scale={g.small(1, 4)}) + {f}(b={g.int_(0)}, a={g.int_(0)})"]
        g.names.update({r1: "int", r2: "int"})
    elif shape == "closure":
        mk, fs, r = g.fresh("f"), g.fresh("list"), g.fresh("list")
        lines += [f"def {mk}(n):", "    def inner(x, m=n):", "        return x * m + n",
                  "    return inner",
                  f"{fs} = [{mk}(i) for i in range({g.small(0, 3)})]",
                  f"{r} = [h({g.int_(0)}) for h in {fs}]",
                  f"{g.fresh('int')} = {mk}({g.int_(0)})({g.int_(0)})",
                  f"{r}_late = [f() for f in [lambda: i * 2 for i in range({g.small(0, 3)})]]",
                  f"{r}_bound = [f() for f in [lambda i=i: i * 2 for i in range({g.small(0, 3)})]]",
                  f"{r}_loop = []", f"for {r}_j in range({g.small(0, 3)}):",
                  f"    {r}_loop.append(lambda: {r}_j)", f"{r}_calls = [f() for f in {r}_loop]"]
        g.names[r] = "list"
        g.names[f"v{g.n}"] = "int"
    elif shape == "varargs":
        f, r1, r2, r3 = g.fresh("f"), g.fresh("int"), g.fresh("int"), g.fresh("tuple")
        lines += [f"def {f}(*args, **kwargs):",
                  "    return sum(args) + len(kwargs) * 10 + kwargs.get('tile_m', 0)",
                  f"{r1} = {f}({g.int_(1)}, {g.int_(1)}, tile_m={g.int_(0)})",
                  f"{r2} = {f}(*{g.list_(1)}, **{g.dict_(1)})",
                  f"def {f}_pack(*args):", "    return args",
                  f"{r3} = {f}_pack(*{g.tuple_(1)}, {g.int_(0)})"]
        g.names.update({r1: "int", r2: "int", r3: "tuple"})
    elif shape == "class":
        _class(g, lines)
    elif shape in ("helpers", "aliasing", "heuristics", "try", "generators", "sets", "match", "operators",
                   "builtins"):
        _real_code(g, lines, shape)
    elif shape == "comprehension":
        name = g.fresh("list")
        lines.append(f"{name} = [x * y for x in range({g.small(0, 4)}) if x != {g.small(0, 3)} "
                     f"for y in {g.list_(1)}]")
        g.names[name] = "list"


def _real_code(g: _Gen, lines: list[str], shape: str) -> None:
    """Shapes of kernel-library code: helper chains, helpers that fill the list they are given,
    a heuristic that picks a config, a guarded computation."""
    p = f"h{g.n}"
    g.n += 1
    r1, r2, r3 = g.fresh("int"), g.fresh("int"), g.fresh("int")
    if shape == "helpers":
        lines += [f"def {p}_pad(x, m={g.choice([8, 16, 64])}):", "    return -(-x // m) * m",
                  f"def {p}_tiles(n, tile):", f"    return {p}_pad(n, tile) // tile",
                  f"def {p}_plan(m, n, tile_m={g.choice([64, 128])}, tile_n={g.choice([64, 256])}):",
                  f"    grid = ({p}_tiles(m, tile_m), {p}_tiles(n, tile_n))",
                  "    return grid, math.prod(grid)",
                  f"({r1}, {r2}), {r3} = {p}_plan({g.small(1, 9) * 100}, {g.small(1, 9) * 64})"]
    elif shape == "aliasing":
        acc, row, grid, cells, d = (f"{p}_{x}" for x in ("acc", "row", "grid", "cells", "d"))
        lines += [f"def {p}_add(xs, v):", "    xs.append(v)", "    return len(xs)",
                  f"{acc} = []", f"{r1} = {p}_add({acc}, {g.int_(0)}) + {p}_add({acc}, 2)",
                  f"def {p}_grow(v, into=[]):", "    into.append(v)", "    return list(into)",
                  f"{p}_g = {p}_grow(1)", f"{r2} = len({p}_grow(2)) + len({p}_g)",
                  f"{row} = [0] * 3", f"{grid} = [{row}, {row}]", f"{grid}[0][1] = {g.int_(0)}",
                  f"{cells} = [[0] * 2 for _ in range(2)]", f"{cells}[0][0] = 1",
                  f"{d} = {{'a': []}}", f"{d}['a'].append(1)", f"{d}.setdefault('b', []).append(2)",
                  f"{r3} = {row}[1] + {cells}[1][0] + len({d}['a']) + len({d}['b'])"]
        g.names.update({acc: "list", row: "list", cells: "list", d: "dict"})
    elif shape == "heuristics":
        lines += ["@dataclasses.dataclass(frozen=True)", f"class {p}_Config:",
                  "    block_m: int", "    block_n: int = 128", "    num_stages: int = 2",
                  f"def {p}_pick(m, n, dtype_bits=16):",
                  f"    if m <= {g.choice([64, 128])}:",
                  f"        return {p}_Config(block_m=64, num_stages=4 if dtype_bits == 8 else 3)",
                  "    elif n % 256 == 0:",
                  f"        return {p}_Config(128, block_n=256)",
                  f"    return {p}_Config(128)",
                  f"{p}_cfg = {p}_pick({g.small(1, 6) * 48}, {g.small(1, 4) * 128}, {g.choice([8, 16])})",
                  f"{r1} = {p}_cfg.block_m * {p}_cfg.block_n * {p}_cfg.num_stages",
                  f"{r2} = {p}_cfg.block_m * 2 // {p}_cfg.num_stages",
                  f"{r3} = functools.reduce(lambda a, b: a * b, ({p}_cfg.block_m, {p}_cfg.block_n), 1)"]
    elif shape == "generators":  # an epilogue's tiles through generators (tokamax's two_in_flight)
        gen, rest, w = (f"{p}_{x}" for x in ("gen", "rest", "w"))
        lines += [f"def {p}_tiles(n, step={g.choice([1, 2, 3])}):", "    for i in range(n):",
                  "        if i % step == 0:", "            yield i * step", "    yield -1",
                  f"def {p}_ahead(it):", "    for a, _ in itertools.pairwise(itertools.chain(it, [None])):",
                  "        yield a",
                  f"{gen} = {p}_tiles({g.small(0, 6)})", f"{r1} = next({gen}, {g.int_(0)})",
                  f"{rest} = list({p}_ahead({gen}))", f"{r2} = len({rest}) + len(list({gen}))",
                  f"{w} = [x + {g.int_(0)} for x in {p}_tiles({g.small(0, 5)}) if x > 0]",
                  f"{p}_a, {p}_b = {p}_tiles(1)", f"{r3} = len({w}) * 10 + {p}_a - {p}_b"]
        g.names.update({rest: "list", w: "list"})
    elif shape == "sets":  # candidate configs collected in a set (tokamax's vjp heuristics)
        found, seen = f"{p}_found", f"{p}_seen"
        key = g.choice(["(c.stages, c.block)", "c.stages", "-c.block * 10 - c.stages"])
        lines += ["@dataclasses.dataclass(frozen=True)", f"class {p}_Cfg:",
                  "    block: int", "    stages: int = 2",
                  f"{found} = set()", f"for {p}_b in ({g.choice([128, 256])}, 64):",
                  "    for s in (1, 2, 3):", f"        if {p}_b * s <= {g.choice([128, 256, 400])}:",
                  f"            {found}.add({p}_Cfg({p}_b, s))", f"            {found}.add({p}_Cfg({p}_b, stages=s))",
                  f"    if {found}:", "        break",
                  f"{seen} = {{{g.int_(0)}, {g.int_(1)} % 3, True, {g.small(0, 3)}}}",
                  f"{seen}.discard({g.small(0, 3)})", f"{seen}.update([{g.small(0, 4)}, 1.0], {{{g.small()}}})",
                  f"{r1} = len({found}) * 10 + len({seen}) + ({g.small(0, 4)} in {seen})",
                  f"{r2} = max({found}, key=lambda c: {key}).stages if {found} else -1",
                  (f"{r3} = sum(sorted({seen})) + min([{g.int_(0)}, {g.int_(0)}], key=abs)"
                   f" + next(iter({{{g.small()}}}))"),
                  f"{p}_ops = sorted(({seen} | {{{g.small()}, {g.small()}}}) - {{{g.small()}}}) + sorted({seen} & {{1, 2}})",
                  (f"{p}_cmp = len({seen} ^ frozenset({g.list_(1)})) + ({seen} <= ({seen} | {{1}}))"
                   f" + ({seen} == set({g.list_(1)})) + (frozenset({seen}) != {seen})")]
    elif shape == "match":  # a preset picked by `match` (tokamax's to_dot_algorithm_preset)
        prec = f"{p}_Prec"
        half = g.choice(['"f16"', '"bf16"'])
        dtype = g.choice(['"f16"', '"bf16"', '"f32"', '"tf32"', '"f8"'])
        precision = g.choice(["None", f"{prec}.DEFAULT", f"{prec}.HIGH", f"{prec}.HIGHEST"])
        other = g.choice([g.list_(1), g.tuple_(1), g.dict_(1), g.int_(1), "2.5", "True"])
        lines += [f"class {prec}(enum.Enum):", "    DEFAULT = 0", "    HIGH = 1", "    HIGHEST = 2",
                  f"def {p}_preset(dtype, precision, n=0):",
                  "    match dtype:",
                  f"        case {half}:",
                  "            match precision:",
                  f"                case {prec}.DEFAULT | None:",
                  "                    return 1",
                  f"                case {prec}.HIGH if n > 2:",
                  "                    return 2",
                  "                case _:",
                  "                    return 3",
                  '        case "f32" | "tf32" as name:',
                  "            return 10 + len(name)",
                  "        case (a, b, *rest):",
                  "            return a * 100 + b + len(rest)",
                  "        case [x]:",
                  "            return x",
                  '        case {"bits": bits, **others}:',
                  "            return bits + len(others)",
                  "        case int(k) if k > 4:",
                  "            return -k",
                  "        case float() | bool():",
                  "            return -1",
                  "    return 0",
                  f"{r1} = {p}_preset({dtype}, {precision}, {g.int_(0)})",
                  f"{r2} = {p}_preset({other}, None)",
                  f"{r3} = {p}_preset({{'bits': {g.int_(0)}, 'x': 1}}, None) + {p}_preset([{g.int_(0)}], None)"]
    elif shape == "operators":  # masks combined with `&=` (tokamax's attention op), offsets with `+`
        m, sub = f"{p}_Mask", f"{p}_Window"
        iand = g.choice([[], ["    def __iand__(self, other):",
                              f"        if not isinstance(other, {m}) or other.lo is None:",
                              "            return NotImplemented",
                              "        return self & other"]])
        lines += ["@dataclasses.dataclass(frozen=True)", f"class {m}:", "    lo: int | None = None",
                  "    hi: int | None = None",
                  "    def __and__(self, other):",
                  "        if isinstance(other, int):",
                  f"            other = {m}(hi=other)",
                  f"        elif not isinstance(other, {m}):",
                  "            return NotImplemented",
                  "        pick = lambda f: lambda a, b: b if a is None else a if b is None else f(a, b)",
                  f"        return {m}(pick(max)(self.lo, other.lo), pick(min)(self.hi, other.hi))",
                  "    def __rand__(self, other):",
                  "        return self & other",
                  "    def __radd__(self, k):",
                  f"        return {m}(None if self.lo is None else self.lo + k, None if self.hi is None else self.hi + k)",
                  "    def __neg__(self):",
                  f"        return {m}(None if self.hi is None else -self.hi, None if self.lo is None else -self.lo)",
                  "    def __len__(self):",
                  "        return 0 if self.lo is None or self.hi is None else max(0, self.hi - self.lo)",
                  *iand,
                  f"class {sub}({m}):",
                  "    def __rand__(self, other):",
                  f"        return {m}(-1, -1)",
                  f"{p}_a = {m}(lo={g.int_(0)})",
                  f"{p}_a &= {m}(hi={g.small(1, 9) * 16})",
                  f"{p}_a &= {g.choice([str(g.small(1, 9) * 8), f'{m}()', f'{m}(lo={g.small(0, 5)})'])}",
                  f"{p}_b = {g.small(0, 4)} + (-{p}_a)",
                  f"{p}_c = {m}(1, {g.small(2, 6)}) & {sub}({g.small(0, 3)}, 9)",
                  f"{r1} = ({p}_a.lo or 0) * 1000 + ({p}_a.hi or 0) + len({p}_a)",
                  f"{r2} = ({p}_b.hi or 0) - ({p}_b.lo or 0) + (1 if {p}_a else 0) + bool({m}())",
                  f"{r3} = {p}_c.lo * 10 + {p}_c.hi + len({m}({g.small(0, 3)}, {g.small(2, 5)}))"]
    elif shape == "builtins":  # a config dict zipped from names, enumerated stages, sorted items
        names, cfg, tag = f"{p}_names", f"{p}_cfg", f"{p}_Tag"
        keys = g.choice([("'m'", "'n'", "'k'"), ("'a'", "'b'"), ("'x'",)])
        lines += [f"class {tag}:",
                  "    def __init__(self, n):", "        self.n = n",
                  "    def __repr__(self):", f"        return 'T' + str(self.n)",
                  *(["    def __str__(self):", "        return '#' + str(self.n)"] if g.choice([0, 1]) else []),
                  f"{names} = ({', '.join(keys)},)",
                  f"{cfg} = dict(zip({names}, [{g.int_(0)}, {g.small(0, 9)}, {g.small(0, 9)}]{g.choice(['', ', strict=False'])}))",
                  f"{p}_st = [i * 10 + v for i, v in enumerate(sorted({cfg}.values()), {g.small(0, 3)})]",
                  f"{p}_it = sorted({cfg}.items(), reverse={g.choice(['True', 'False'])})",
                  f"{r1} = len({cfg}) * 100 + sum({p}_st) + len(list(reversed({p}_it)))",
                  f"{r2} = len(f'{{{tag}({g.small(0, 99)})}}{{{tag}(3)!r}}') + len(str({tag}({g.int_(0)})))",
                  f"{r3} = dict([(k, v) for k, v in {p}_it]).get({keys[0]}, -1)"]
    else:  # try
        lines += ["try:", f"    {r1} = {g.int_(1)} // ({g.small(0, 2)})", "except ZeroDivisionError:",
                  f"    {r1} = -1", f"{r2} = 0", f"for {p}_i in range({g.small(0, 4)}):",
                  "    try:", f"        {r2} += [1, 2][{p}_i]", "    except IndexError:",
                  "        break", f"{r3} = {r2} * 2"]
    g.names.update({r1: "int", r2: "int", r3: "int"})


def _class(g: _Gen, lines: list[str]) -> None:
    """A config class in one of the forms kernel code uses, and a few values read from it."""
    c = g.fresh("cls").replace("v", "C")
    tm, tn, ns = g.small(1, 8) * 16, g.small(1, 8) * 16, g.small(1, 4)
    form = g.choice(["dataclass", "frozen", "plain", "namedtuple", "enum", "inherit", "factory",
                     "cached", "intenum"])
    r1, r2, r3 = g.fresh("int"), g.fresh("int"), g.fresh("int")
    if form in ("dataclass", "frozen"):
        frozen = "(frozen=True)" if form == "frozen" else ""
        lines += [f"@dataclasses.dataclass{frozen}", f"class {c}:", "    tile_m: int",
                  f"    tile_n: int = {tn}", f"    num_stages: int = {ns}",
                  "    @property", "    def block(self):", "        return self.tile_m * self.tile_n",
                  "    @classmethod", "    def square(cls, n):", "        return cls(n, n)",
                  f"cfg_{c} = {c}({tm}, num_stages={g.small(1, 5)})",
                  f"{r1} = cfg_{c}.tile_m * 2 // cfg_{c}.num_stages + cfg_{c}.block",
                  f"{r2} = dataclasses.replace(cfg_{c}, tile_n={g.small(1, 4) * 16}).tile_n",
                  f"{r3} = {c}.square({g.small(1, 5)}).block"]
    elif form == "plain":
        lines += [f"class {c}:", f"    scale = {g.small(1, 4)}",
                  f"    def __init__(self, m, n={tn}):", "        self.m = m", "        self.n = n * self.scale",
                  "    def area(self):", "        return self.m * self.n",
                  "    @staticmethod", "    def twice(x):", "        return 2 * x",
                  f"o_{c} = {c}({tm})", f"o_{c}.m += {g.small(0, 4)}",
                  g.choice([f"{c}.scale = {g.small(1, 4)}", f"setattr(o_{c}, 'scale', {g.small(5, 9)})",
                            f"o_{c}.scale = 7\ndel o_{c}.scale", f"if o_{c}:\n    o_{c}.n = 1",
                            f"if {g.bool_(1)}:\n    {c}.scale = 9"]),
                  f"{r1} = o_{c}.area()", f"{r2} = {c}.twice(o_{c}.n)", f"{r3} = o_{c}.scale + {c}.scale"]
    elif form == "namedtuple":
        lines += [f"class {c}(typing.NamedTuple):", "    m: int", f"    n: int = {tn}",
                  f"t_{c} = {c}({tm})", f"{r1} = t_{c}.m + t_{c}.n",
                  f"{r2} = t_{c}[0] * 2", f"{r3} = len(t_{c}._replace(m={g.small(1, 4)}))"]
    elif form == "enum":
        base = g.choice(["enum.Enum", "enum.IntEnum"])
        lines += [f"class {c}({base}):", "    SMALL = 1", f"    LARGE = {g.small(2, 5)}",
                  f"mode_{c} = {c}.{g.choice(['SMALL', 'LARGE'])}",
                  f"if mode_{c} == {c}.LARGE:", f"    {r1} = {tm}", "else:", f"    {r1} = {tn}",
                  f"{r2} = mode_{c}.value * {ns}",
                  f"{r3} = len(mode_{c}.name) + ({c}({g.small(1, 2)}) is {c}.SMALL)"]
    elif form == "inherit":
        lines += [f"class {c}Base:", "    def __init__(self, m):", "        self.m = m",
                  "    def size(self):", "        return self.m",
                  f"class {c}({c}Base):", f"    def __init__(self, m, k={ns}):",
                  "        super().__init__(m * 2)", "        self.k = k",
                  "    def size(self):", "        return super().size() + self.k",
                  f"o_{c} = {c}({tm})",
                  f"{r1} = o_{c}.size()", f"{r2} = o_{c}.m", f"{r3} = {c}Base({tn}).size()"]
    elif form == "cached":
        lines += [f"class {c}:", "    def __init__(self, m):", "        self.m = m",
                  "        self.calls = 0", "    @functools.cached_property",
                  "    def tiles(self):", "        self.calls += 1", "        return self.m // 16",
                  f"o_{c} = {c}({tm})", f"{r1} = o_{c}.tiles + o_{c}.tiles", f"{r2} = o_{c}.calls",
                  f"o_{c}.m = 16", f"{r3} = o_{c}.tiles"]
    elif form == "intenum":
        lines += [f"class {c}(enum.IntEnum):", "    M = 0", "    N = 1",
                  f"dim_{c} = {c}({g.small(0, 1)})",
                  f"{r1} = {tm} if dim_{c} == 0 else {tn}",
                  f"{r2} = int(dim_{c} in ({c}.N,)) + (dim_{c} < 1)",
                  f"{r3} = [m.value for m in {c}][-1] + len({c}.__members__)"]
    else:  # factory
        lines += ["@dataclasses.dataclass", f"class {c}:", f"    m: int = {tm}",
                  "    dims: list = dataclasses.field(default_factory=list)",
                  f"    k: int = dataclasses.field(default={ns})",
                  "    def __post_init__(self):", "        self.total = self.m * self.k",
                  f"o_{c} = {c}(k={g.small(1, 4)})", f"o_{c}.dims.append(3)",
                  f"{r1} = o_{c}.total", f"{r2} = len(o_{c}.dims) + len({c}().dims)",
                  f"{r3} = o_{c}.k"]
    g.names.update({r1: "int", r2: "int", r3: "int"})


def _program(g: _Gen, statements: int) -> str:
    lines: list[str] = []
    for _ in range(statements):
        _statement(g, lines)
    return HEADER + "\n".join(lines) + "\n"


@st.composite
def programs(draw: Any, max_statements: int = 6) -> str:
    """Programs drawn choice by choice (hypothesis shrinks a failing one to a small one)."""
    g = _Gen(lambda lo, hi: draw(st.integers(lo, hi)))
    return _program(g, g.small(1, max_statements))


def program_from_seed(seed: int, max_statements: int = 4) -> str:
    """The program a seed gives: the same choices made by a seeded random (fast: the CI test
    runs thousands of them; `programs()` shrinks a failure better)."""
    rng = random.Random(seed)
    g = _Gen(rng.randint)
    return _program(g, g.small(1, max_statements))


# -- running and comparing ----------------------------------------------------------------------

def run_cpython(source: str) -> dict[str, Any] | None:
    """The program's module namespace after CPython ran it; None if it raised."""
    namespace: dict[str, Any] = {"__name__": "__differential__"}
    try:
        # (dont_inherit: not this module's `from __future__ import annotations`)
        exec(compile(source, "<program>", "exec", dont_inherit=True), namespace)  # noqa: S102
    except Exception as e:
        LAST_ERROR[0] = e
        return None
    return namespace


LAST_ERROR: list[BaseException | None] = [None]  # what the last program CPython refused raised


def run_interpreter(source: str) -> tuple[dict[str, Value], Interpreter]:
    """The values the interpreter holds for the module's names after running it as module code."""
    tree = ast.parse(source)
    interp = Interpreter(source, tree, LineIndex(source))
    interp.run_module()
    return dict(interp.module_env.vars), interp


@dataclass
class Tally:
    programs: int = 0
    raised: int = 0
    claims: int = 0
    agreements: int = 0
    disagreements: list[str] = field(default_factory=list)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def compare_value(claimed: Value, actual: Any, where: str, tally: Tally, interp: Any) -> None:
    """Count the interpreter's claims inside `claimed` and note each one CPython's `actual`
    contradicts (a list or dict it stopped following claims nothing: see interpret/mutation.py)."""
    claimed = mutation.live(interp, claimed)
    if isinstance(claimed, Const):
        tally.claims += 1
        if _same(claimed.value, actual):
            tally.agreements += 1
        else:
            tally.disagreements.append(f"{where}: interpreter {claimed.value!r}, CPython {actual!r}")
    elif isinstance(claimed, TupleVal):
        tally.claims += 1
        kind = list if claimed.is_list else tuple
        if not (type(actual) is kind or (kind is tuple and isinstance(actual, tuple))) \
                or len(actual) != len(claimed.items):
            tally.disagreements.append(f"{where}: interpreter {claimed.describe()}, CPython {actual!r}")
            return
        tally.agreements += 1
        for i, (c, a) in enumerate(zip(claimed.items, actual)):
            compare_value(c, a, f"{where}[{i}]", tally, interp)
    elif isinstance(claimed, SetVal):  # its elements, in no order
        tally.claims += 1
        kind = frozenset if claimed.frozen else set
        if type(actual) is not kind or len(actual) != len(claimed.items) \
                or not all(any(_same(c.value, a) for a in actual) for c in claimed.items if isinstance(c, Const)):
            tally.disagreements.append(f"{where}: interpreter {claimed.describe()}, CPython {actual!r}")
            return
        tally.agreements += 1
    elif isinstance(claimed, DictVal):
        tally.claims += 1
        keys = [k for k, _ in claimed.items]
        if type(actual) is not dict or keys != list(actual):
            tally.disagreements.append(f"{where}: interpreter dict with keys {keys}, CPython {actual!r}")
            return
        tally.agreements += 1
        for k, v in claimed.items:
            compare_value(v, actual[k], f"{where}[{k!r}]", tally, interp)


def check_program(source: str, tally: Tally) -> list[str]:
    """Run one program both ways; the disagreements it adds to the tally."""
    tally.programs += 1
    expected = run_cpython(source)
    if expected is None:
        tally.raised += 1
        return []
    before = len(tally.disagreements)
    got, interp = run_interpreter(source)
    for name, actual in expected.items():
        if name.startswith("__") or name not in got:
            continue
        compare_value(got[name], actual, name, tally, interp)
    return tally.disagreements[before:]


# -- the same programs as a function's body, run from a `__main__` block --------------------------

def as_main(source: str) -> str:
    """The program's statements as the body of `main()` (its definitions become nested ones),
    which returns its local names; a `__main__` block calls it. The analyzer runs it as an entry
    point, after module code (its calls memoised, its objects the context's own)."""
    body = source[len(HEADER):]
    lines = ["def main():"] + ["    " + ln if ln.strip() else ln for ln in body.splitlines()]
    lines += ["    return locals()", "", 'if __name__ == "__main__":', "    main()", ""]
    return HEADER + "\n".join(lines)


def _assigned_once(main: ast.FunctionDef) -> dict[str, int]:
    """Names of main's top-level `name = ...` statements bound nowhere else in main: their
    0-based line."""
    counts: dict[str, int] = {}
    for node in ast.walk(main):
        names: list[str] = []
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not main:
            names = [node.name]
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    out = {}
    for stmt in main.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and counts.get(stmt.targets[0].id) == 1:
            out[stmt.targets[0].id] = stmt.lineno - 1
    return out


def check_program_in_main(source: str, tally: Tally) -> list[str]:
    """Run a program as `main()`'s body both ways: every value the analysis recorded for a name
    main binds once (in any context) must be CPython's value of that local when main returns."""
    return check_main(as_main(source), tally)


def check_main(text: str, tally: Tally, path: str | None = None, program: Any = None) -> list[str]:
    """`check_program_in_main` for a whole file `text` whose `main()` returns its locals (its
    other functions at module level: the analysis memoises their calls), analysed as `path`
    (its imports of the user's other modules read through `program`, wgmma_lsp.program.Program)."""
    from wgmma_lsp.analysis import analyze

    tally.programs += 1
    namespace = run_cpython(text)
    if namespace is None:
        tally.raised += 1
        return []
    try:
        local = namespace["main"]()
    except Exception:
        tally.raised += 1
        return []
    main = next(s for s in ast.parse(text).body if isinstance(s, ast.FunctionDef) and s.name == "main")
    once = _assigned_once(main)
    before = len(tally.disagreements)
    analysis = analyze(text, path, program=program) if path is not None else analyze(text)
    for span, rec in analysis.records.items():
        if rec.kind != "store" or rec.name not in once or once[rec.name] != span.line \
                or rec.name not in local:
            continue
        for v in rec.values:
            if isinstance(v, (TupleVal, DictVal)) and v.spoiled:
                continue
            compare_value(v, local[rec.name], f"main: {rec.name}", tally, _NoSpoils())
    return tally.disagreements[before:]


class _NoSpoils:
    """(An analysis keeps no interpreter: a spoiled container is marked on itself.)"""

    spoiled_shared: dict = {}

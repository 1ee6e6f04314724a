"""Which primitives the installed JAX's Mosaic GPU lowering can lower, per thread semantics:
the `mosaic_lowering_rules` table of jax/_src/pallas/mosaic_gpu/lowering.py, read with `ast`
(never imported).

JAX fills the table, keyed by (lowering semantics, primitive semantics), in these forms (0.10.2,
0.12.0.1), in lowering.py, primitives.py and the other modules of the package:

- `@register_lowering_rule(prim, mgpu.LoweringSemantics.Lane[, gpu_core.PrimitiveSemantics.Warp])`
  and `@register_lowering_rule(prim, *gpu_core.WGxWARP_SEMANTICS)` (also called, not decorating);
- `mosaic_lowering_rules[gpu_core.LANExWG_SEMANTICS].update({prim: rule, ...})`;
- `mosaic_lowering_rules[gpu_core.WGxWG_SEMANTICS][prim] = rule`;
- either inside `for op, ... in [(lax.add_p, ...), ...]:` / `for semantics in [...]:` over literal lists.

A registration this reader cannot decode makes the table incomplete for the keys it might fill
("*" in that key's list, or in every key), so a primitive is only ever *proven* missing.
Primitives are named by their dotted variable (`jax.lax.dot_general_p`), their module resolved
through the file's imports. tests/test_lowering_primitives.py compares the table with the one
the installed JAX builds when imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

from wgmma_lsp import observed

#: The keys of the table, as "lowering/primitive" semantics.
KEYS = ("lane/warpgroup", "lane/warp", "warpgroup/warpgroup", "warpgroup/warp")
UNKNOWN = "*"
_PACKAGE = "jax._src.pallas.mosaic_gpu"
_REGISTER = f"{_PACKAGE}.lowering.register_lowering_rule"
_PAIRS = {"LANExWG_SEMANTICS": "lane/warpgroup", "LANExWARP_SEMANTICS": "lane/warp",
          "WGxWG_SEMANTICS": "warpgroup/warpgroup", "WGxWARP_SEMANTICS": "warpgroup/warp"}


def read(root: Path) -> dict[str, list[str]] | None:
    """The table of the JAX package at `root` (key -> sorted dotted primitive names, "*" when
    the key may hold primitives this reader could not name); None without lowering.py."""
    from wgmma_lsp.interpret import jax_source_read as jax_source

    package = root.joinpath(*_PACKAGE.split(".")[1:])
    if not observed.exists(package / "lowering.py"):
        return None
    table: dict[str, set[str]] = {k: set() for k in KEYS}
    for path in observed.glob(package, "*.py"):
        text = jax_source.read_source(str(path.relative_to(root)))
        if text is None or ("register_lowering_rule" not in text and "mosaic_lowering_rules" not in text):
            continue
        try:
            tree = ast.parse(text, str(path))
        except SyntaxError:
            for k in KEYS:
                table[k].add(UNKNOWN)
            continue
        _Reader(tree, jax_source._imports(tree), f"{_PACKAGE}.{path.stem}", table).run()
    return {k: sorted(v) for k, v in table.items()}


class _Reader:
    def __init__(self, tree: ast.Module, imports: dict[str, str], module: str,
                 table: dict[str, set[str]]) -> None:
        self.tree, self.imports, self.module, self.table = tree, imports, module, table
        self.parents: dict[int, ast.AST] = {}
        self.own: set[int] = set()
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node

    def run(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.name == "register_lowering_rule":
                self.own.update(id(n) for n in ast.walk(node))  # the table's own writer
        for node in ast.walk(self.tree):
            if id(node) in self.own:
                continue
            if isinstance(node, ast.Call) and self._dotted(node.func) == _REGISTER:
                self._register_call(node)
            elif isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) == "mosaic_lowering_rules" \
                    and not (isinstance(node, ast.Attribute) and last_name(node.value) == "mosaic_lowering_rules"):
                self._table_use(node)

    # -- register_lowering_rule(prim, *semantics) -----------------------------------------------
    def _register_call(self, call: ast.Call) -> None:
        if call.keywords or not call.args:
            return self._unknown(KEYS)
        prims = self._values(call.args[0], call, self._primitive)
        sems: list[list[str]] = [[]]
        for a in call.args[1:]:
            arg = a.value if isinstance(a, ast.Starred) else a
            parts = self._values(arg, call, self._semantics)
            if parts is None:
                return self._unknown(KEYS)
            sems = [s + p for s in sems for p in parts]
        keys = set()
        for s in sems:
            if len(s) == 1:
                s = s + ["warpgroup"]  # primitive_semantics defaults to Warpgroup
            key = "/".join(s)
            if key not in KEYS:
                return self._unknown(KEYS)
            keys.add(key)
        if prims is None:
            return self._unknown(keys)
        for k in keys:
            self.table[k].update(p[0] for p in prims)

    # -- mosaic_lowering_rules[key][prim] = …, mosaic_lowering_rules[key].update({…}) ----------
    def _table_use(self, node: ast.AST) -> None:
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Assign) and node in parent.targets:
            return  # its definition
        if isinstance(parent, ast.Attribute) and parent.attr == "register_lowering_rule":
            return
        if isinstance(parent, ast.FunctionDef):
            return
        if not (isinstance(parent, ast.Subscript) and parent.value is node):
            return self._unknown(KEYS)  # aliased or passed on: anything may be registered
        outer = self.parents.get(id(parent))
        if isinstance(outer, ast.Compare) or (isinstance(outer, ast.Subscript) and isinstance(outer.ctx, ast.Load)
                                               and outer.value is parent):
            return  # a lookup
        if isinstance(outer, ast.Subscript) and isinstance(outer.ctx, ast.Store):
            keys = self._keys(parent.slice, node)
            prims = self._values(outer.slice, node, self._primitive)
            return self._add(keys, prims)
        if isinstance(outer, ast.Attribute) and outer.attr == "update":
            call = self.parents.get(id(outer))
            keys = self._keys(parent.slice, node)
            if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords \
                    and isinstance(call.args[0], ast.Dict) and None not in call.args[0].keys:
                prims: list[tuple[str]] | None = []
                for k in call.args[0].keys:
                    p = self._values(k, node, self._primitive) if k is not None else None
                    if p is None:
                        prims = None
                        break
                    prims += p  # type: ignore[operator]
                return self._add(keys, prims)
            return self._add(keys, None)
        return self._unknown(KEYS)

    def _keys(self, expr: ast.expr, at: ast.AST) -> set[str] | None:
        vals = self._values(expr, at, self._pair)
        return {v[0] for v in vals} if vals is not None else None

    def _add(self, keys: set[str] | None, prims: list[tuple[str]] | None) -> None:
        if keys is None:
            return self._unknown(KEYS)
        if prims is None:
            return self._unknown(keys)
        for k in keys:
            self.table[k].update(p[0] for p in prims)

    def _unknown(self, keys) -> None:
        for k in keys:
            self.table[k].add(UNKNOWN)

    # -- values ---------------------------------------------------------------------------
    def _values(self, expr: ast.expr, at: ast.AST, leaf) -> list[tuple] | None:
        """What `expr` stands for at `at`: one value, or one per iteration of the enclosing
        `for` over a literal list when it is (or unpacks from) the loop variable."""
        if isinstance(expr, ast.Name):
            loop = self._loop_binding(expr.id, at)
            if loop is not None:
                target, items = loop
                out = []
                for item in items:
                    bound = _unpack(target, item, expr.id)
                    if bound is None:
                        return None
                    v = leaf(bound)
                    if v is None:
                        return None
                    out.extend(v)
                return out
        v = leaf(expr)
        return v

    def _loop_binding(self, name: str, at: ast.AST) -> tuple[ast.expr, list[ast.expr]] | None:
        node: ast.AST | None = at
        while node is not None:
            node = self.parents.get(id(node))
            if isinstance(node, ast.For) and name in {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}:
                if isinstance(node.iter, (ast.List, ast.Tuple)):
                    return node.target, list(node.iter.elts)
                return None
        return None

    def _dotted(self, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Name):
            return self.imports.get(expr.id, f"{self.module}.{expr.id}")
        if isinstance(expr, ast.Attribute):
            base = self._dotted(expr.value)
            return f"{base}.{expr.attr}" if base is not None else None
        return None

    def _primitive(self, expr: ast.expr) -> list[tuple[str]] | None:
        name = self._dotted(expr)
        return [(name,)] if name is not None and name.endswith("_p") else None

    def _semantics(self, expr: ast.expr) -> list[list[str]] | None:
        """`mgpu.LoweringSemantics.Lane` -> [["lane"]]; `gpu_core.WGxWARP_SEMANTICS` -> [["warpgroup", "warp"]]."""
        pair = self._pair(expr)
        if pair is not None:
            return [pair[0][0].split("/")]
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Attribute) \
                and expr.value.attr in ("LoweringSemantics", "PrimitiveSemantics") \
                and expr.attr in ("Lane", "Warpgroup", "Warp"):
            return [[expr.attr.lower()]]
        return None

    def _pair(self, expr: ast.expr) -> list[tuple[str]] | None:
        name = last_name(expr)
        return [(_PAIRS[name],)] if name in _PAIRS else None


def last_name(expr: ast.AST) -> str | None:
    """The name a `Name` or `Attribute` ends in (`pl.kernel` -> "kernel"), else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _unpack(target: ast.expr, item: ast.expr, name: str) -> ast.expr | None:
    """The part of `item` that `name` is bound to by `for target in [..., item, ...]`."""
    if isinstance(target, ast.Name):
        return item if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(item.elts):
        for t, i in zip(target.elts, item.elts):
            found = _unpack(t, i, name)
            if found is not None:
                return found
    return None


"""Parameters the installed JAX deprecates, read from its source (WG095).

A public `pl.*`/`plgpu.*` function deprecates a parameter when its body warns under a test that
the parameter was given:

    if not isinstance(out_shape, api.NotSpecified) or ...:   # or `p is not None`, or `p`
        deprecations.warn("jax-…", "The out_shape … are deprecated. Use out_type …", stacklevel=2)

(`deprecations.warn(id, message)` or `warnings.warn(message, DeprecationWarning)`). The message
is JAX's own. A parameter whose value the function then assigns to another parameter
(`out_type = out_shape`) is an alias of it: the migration is that keyword. Nothing is hard-coded
per version: what the installed source says is what is reported.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret.ast_walk import own_nodes


def _warning_message(stmt: ast.stmt) -> str | None:
    """The message of `deprecations.warn(id, msg, ...)` / `warnings.warn(msg, DeprecationWarning)`."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
    if name != "warn":
        return None
    args = call.args
    if owner == "deprecations" and len(args) >= 2:
        msg = args[1]
    elif owner == "warnings" and args and (
            any(isinstance(a, ast.Name) and a.id == "DeprecationWarning" for a in args[1:2])
            or any(k.arg == "category" and isinstance(k.value, ast.Name) and k.value.id == "DeprecationWarning"
                   for k in call.keywords)):
        msg = args[0]
    else:
        return None
    try:
        value = ast.literal_eval(msg)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _given(test: ast.expr, params: set[str]) -> list[str] | None:
    """The parameters a test checks were given (`p is not None`, `not isinstance(p, X.NotSpecified)`,
    `p`, joined with `or`); None when the test is anything else."""
    clauses = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    out = []
    for c in clauses:
        if isinstance(c, ast.Name) and c.id in params:
            out.append(c.id)
        elif isinstance(c, ast.Compare) and isinstance(c.left, ast.Name) and c.left.id in params \
                and len(c.ops) == 1 and isinstance(c.ops[0], ast.IsNot) \
                and isinstance(c.comparators[0], ast.Constant) and c.comparators[0].value is None:
            out.append(c.left.id)
        elif isinstance(c, ast.UnaryOp) and isinstance(c.op, ast.Not) and isinstance(c.operand, ast.Call) \
                and isinstance(c.operand.func, ast.Name) and c.operand.func.id == "isinstance" \
                and len(c.operand.args) == 2 and isinstance(c.operand.args[0], ast.Name) \
                and c.operand.args[0].id in params and "NotSpecified" in ast.unparse(c.operand.args[1]):
            out.append(c.operand.args[0].id)
        else:
            return None
    return out


def deprecated_params(fn: ast.FunctionDef) -> dict[str, tuple[str, str | None]]:
    """param -> (JAX's deprecation message, the parameter it is an alias of, or None)."""
    a = fn.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    found: dict[str, str] = {}
    for node in own_nodes(fn):
        if isinstance(node, ast.If):
            names = _given(node.test, params)
            message = next((m for m in map(_warning_message, node.body) if m), None)
            if names and message:
                for n in names:
                    found.setdefault(n, message)
    aliases: dict[str, set[str]] = {}
    for node in own_nodes(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Name) and node.value.id in found \
                and node.targets[0].id in params - set(found):
            aliases.setdefault(node.value.id, set()).add(node.targets[0].id)
    return {p: (m, next(iter(aliases[p])) if len(aliases.get(p, ())) == 1 else None)
            for p, m in found.items()}


def read(exports_by_module: dict, find_function) -> dict[str, dict[str, list]]:
    """"plgpu.kernel" -> {"out_shape": [message, "out_type"]} for every public function with
    deprecated parameters. `find_function(export)` gives its FunctionDef (or None)."""
    from wgmma_lsp.interpret.jax_source_read import PUBLIC_MODULES

    out: dict[str, dict[str, list]] = {}
    for prefix, module in PUBLIC_MODULES.items():
        for name, exp in sorted((exports_by_module.get(module) or {}).items()):
            fn = find_function(exp)
            if fn is None:
                continue
            found = deprecated_params(fn)
            if found:
                out[f"{prefix}.{name}"] = {p: [m, r] for p, (m, r) in sorted(found.items())}
    return out


def find_function(exp, depth: int = 0) -> ast.FunctionDef | None:
    """The `def` of an exported name in the analysed JAX's source (through re-exports)."""
    from wgmma_lsp.interpret import jax_source_read as jax_source

    module, name = exp.module, exp.name
    while module is not None and name is not None and depth < 6:
        tree = jax_source._tree(module)
        if tree is None:
            return None
        node = jax_source._find_def(tree, name)
        if node is not None:
            return node if isinstance(node, ast.FunctionDef) else None
        target = jax_source._imports(tree).get(name)
        if target is None:
            return None
        module, _, name = target.rpartition(".")
        depth += 1
    return None

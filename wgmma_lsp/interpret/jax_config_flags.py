"""JAX's configuration flags at their defaults, read from its source.

Library code reads flags: tokamax's `canonicalize_precision(None)` starts with
`if (precision := jax.config.jax_default_matmul_precision) is None: return DEFAULT, DEFAULT`, and
every op of it goes through that line. The analysis assumes JAX's default configuration (as
`interpret/dtypes.py` assumes `jax_enable_x64=False`): no `JAX_*` environment variable, no
`--jax_*` command-line flag. Each flag's default is read from `jax/_src/config.py` (never
imported): a module-level `name = bool_state(name='jax_enable_x64', default=False, ...)` (or
`int_state`, `enum_state`, `optional_enum_state`, `string_state`, ...) whose default is a
literal. A flag whose default is computed (from the environment, from another flag) is not
listed, so it stays unknown.

A `jax.config.update("jax_...", value)` the analysis meets makes that flag unknown from then on
in that analysis (models/jax_config.py): the order the program's modules set and read flags in
is not followed.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import jax_source_read as jax_source
from wgmma_lsp.interpret.jax_lowering_rules import last_name

_CONFIG_MODULE = "jax._src.config"
_KINDS = ("bool_state", "int_state", "float_state", "enum_state", "optional_enum_state",
          "string_state", "optional_string_state", "bool_flag", "int_flag", "string_flag", "enum_flag")
Default = bool | int | float | str | None


def read() -> dict[str, Default] | None:
    """{flag name: its default} for the flags whose default is a literal; None when the config
    module is not found."""
    tree = jax_source._tree(_CONFIG_MODULE)
    if tree is None:
        return None
    out: dict[str, Default] = {}
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(node, ast.Expr):
            value = node.value
        if not isinstance(value, ast.Call) or last_name(value.func) not in _KINDS:
            continue
        name = _argument(value, "name", 0)
        default = _argument(value, "default", _default_position(value.func))
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)
                and name.value.startswith("jax_")) or default is None:
            continue
        try:
            literal = ast.literal_eval(default)
        except ValueError:
            continue  # computed: not known
        if literal is None or type(literal) in (bool, int, float, str):
            out[name.value] = literal
    return out


def _default_position(func: ast.expr) -> int:
    """Where `default` sits among the positional arguments: after `enum_values` for enums."""
    return 2 if (last_name(func) or "").endswith(("enum_state", "enum_flag")) else 1


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    return call.args[position] if position < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[:position + 1]) else None

"""`lax.DotAlgorithmPreset.<member>.accumulation_type`, read from the installed JAX's source.

Library code derives dtypes from a precision preset: tokamax's attention op sets
`logits_dtype = precision_lib.to_dot_algorithm_preset(q.dtype, k.dtype, p).accumulation_type`
and raises unless it is float32. The property is a `match self:` over the members in
`jax/_src/lax/lax.py` (`case DotAlgorithmPreset.F16_F16_F16: return np.float16`, `case _: return
np.float32`); it is read (never imported) into {member: dtype name or None}, for every member
the enum class lists, and kept with the other facts (`jax_facts.py`). A case this reader does
not understand leaves the table out (nothing known), never a guess.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import jax_source_read as jax_source

_MODULE = "jax._src.lax.lax"
_CLASS = "DotAlgorithmPreset"
#: How `lax.py` spells the dtypes it returns: `np.float16`, `dtypes.bfloat16`.
_DTYPE_MODULES = ("np", "dtypes", "jnp", "numpy")


def read() -> dict[str, str | None] | None:
    tree = jax_source._tree(_MODULE)
    cls = jax_source._find_def(tree, _CLASS) if tree is not None else None
    if not isinstance(cls, ast.ClassDef):
        return None
    members = [t.id for s in cls.body if isinstance(s, ast.Assign) for t in s.targets
               if isinstance(t, ast.Name) and t.id.isupper()]
    prop = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "accumulation_type"), None)
    if prop is None or not members:
        return None
    match = next((s for s in prop.body if isinstance(s, ast.Match)), None)
    if match is None or not (isinstance(match.subject, ast.Name) and match.subject.id == "self"):
        return None
    out: dict[str, str | None] = {}
    for case in match.cases:
        if case.guard is not None or len(case.body) != 1 or not isinstance(case.body[0], ast.Return):
            return None
        value = _dtype_name(case.body[0].value)
        if value is False:
            return None
        names = _members(case.pattern)
        if names is None:
            return None
        for name in (members if names == ["_"] else names):
            out.setdefault(name, value)  # type: ignore[arg-type]
    return out if set(out) >= set(members) else None


def _members(p: ast.pattern) -> list[str] | None:
    """The members a case names (`DotAlgorithmPreset.X | ...`); ["_"] for the wildcard."""
    if isinstance(p, ast.MatchAs) and p.pattern is None and p.name is None:
        return ["_"]
    if isinstance(p, ast.MatchOr):
        out: list[str] = []
        for q in p.patterns:
            got = _members(q)
            if got is None or got == ["_"]:
                return None
            out.extend(got)
        return out
    if isinstance(p, ast.MatchValue) and isinstance(p.value, ast.Attribute) \
            and isinstance(p.value.value, ast.Name) and p.value.value.id == _CLASS:
        return [p.value.attr]
    return None


def _dtype_name(node: ast.expr | None) -> str | None | bool:
    """`np.float16` -> "float16", `None` -> None; False when not one of those."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _DTYPE_MODULES:
        return node.attr
    return False

"""The names each function's subtree uses, each function walked once (interpret/driver.py
`function_names`, which orders the functions no context reached): the same sets as walking each
function apart with `ast.walk`, on real code — this repository's modules and fixtures, and the
installed jax's Pallas kernels (deeply nested functions)."""

from __future__ import annotations

import ast
from pathlib import Path

from wgmma_lsp.interpret.driver import function_names

ROOT = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    files = sorted((ROOT / "wgmma_lsp").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py"))
    try:
        import jax

        files += sorted((Path(jax.__file__).parent / "experimental" / "pallas" / "ops").rglob("*.py"))
    except ImportError:
        pass
    return files


def test_one_walk_gives_each_functions_names() -> None:
    checked = 0
    for path in _files():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue  # a fixture of broken code
        names_in: dict[int, frozenset[str]] = {}
        functions = [n for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        for node in reversed(functions) if len(functions) % 2 else functions:  # inner or outer first
            expected = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            assert function_names(node, names_in) == expected, (path, node.lineno)
            checked += 1
    assert checked > 1000

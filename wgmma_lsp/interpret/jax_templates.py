"""JAX's error messages as its installed source spells them (read with `ast`, never imported).

A rule's template (`Rule.template`) is JAX's message with its formatted fields in braces:
`Accumulator dtype {inner.dtype} does not match value dtype {val.dtype}`. Its *literal parts* are
what is left between the braces. The installed JAX spells the same message as an f-string, a
`str.format` template or a constant, possibly split over implicitly concatenated pieces; this
module turns every such string expression of a file into the same brace form (a formatted field
`{expr}` written back with `ast.unparse`) so that a template can be found by its literal parts:
`find(template)` gives the installed source's own wording and where it is, or None when JAX no
longer has it (reworded, moved out of Python, or never literal).

Several templates joined by " / " name alternatives (a rule that reports either); "..." in a
template stands for a part the rule does not quote.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp import observed

#: Where the Mosaic GPU errors live, relative to the `jax` package.
SEARCH_DIRS = ("_src/pallas", "_src/state", "experimental/mosaic/gpu", "_src/lax/control_flow")
EXTRA_FILES = ("_src/core.py", "_src/deprecations.py", "_src/lax/parallel.py", "_src/lax/lax.py")

_FIELD = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class SourceTemplate:
    path: str  # relative to the jax package: "_src/pallas/mosaic_gpu/primitives.py"
    line: int  # 1-based
    text: str  # the message in brace form: "Expected {name} got {x.shape}"
    raised: bool  # an argument of a `raise` (or an assert's message), not just any string


def literal_parts(template: str) -> list[str]:
    """The literal text of a template, between its `{fields}` and `...` gaps."""
    parts: list[str] = []
    for chunk in _FIELD.split(template):
        parts += chunk.replace("…", "...").split("...")
    return [p.strip() for p in parts if p.strip()]


def alternatives(template: str) -> list[str]:
    """The templates a rule's template names (" / " separates alternatives)."""
    return [t.strip() for t in template.split(" / ") if t.strip()]


def _as_template(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                out.append("{" + ast.unparse(v.value) + "}")
            else:  # pragma: no cover - JoinedStr holds only these two
                return None
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _as_template(node.left), _as_template(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _strings(tree: ast.Module) -> list[tuple[int, str, bool]]:
    raised_nodes: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Raise) and n.exc is not None:
            raised_nodes.update(id(m) for m in ast.walk(n.exc))
        elif isinstance(n, ast.Assert) and n.msg is not None:
            raised_nodes.update(id(m) for m in ast.walk(n.msg))
    found: list[tuple[int, str, bool]] = []
    skip: set[int] = set()
    for n in ast.walk(tree):
        if id(n) in skip or not isinstance(n, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            continue
        text = _as_template(n)
        if text is None:
            continue
        skip.update(id(m) for m in ast.walk(n))  # the pieces of a concatenation are not strings of their own
        found.append((n.lineno, text, id(n) in raised_nodes))
    return found


@functools.lru_cache(maxsize=None)
def _file_strings(path: Path) -> tuple[tuple[int, str, bool], ...]:
    try:
        tree = ast.parse(observed.read_text(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return ()
    return tuple(_strings(tree))


def source_files(root: Path) -> list[Path]:
    files = [f for d in SEARCH_DIRS for f in observed.rglob(root / d, "*.py")]
    return files + [root / f for f in EXTRA_FILES if observed.exists(root / f)]


def _matches(parts: list[str], text: str) -> bool:
    pos = 0
    flat = " ".join(text.split())
    for p in parts:
        want = " ".join(p.split())
        i = flat.find(want, pos)
        if i < 0:
            return False
        pos = i + len(want)
    return True


def find(template: str, root: Path | None = None) -> list[SourceTemplate]:
    """Every string of the installed JAX's Mosaic GPU sources holding all literal parts of
    `template` in order (raised ones first). [] when none does or there is no JAX."""
    if root is None:
        from wgmma_lsp.interpret.jax_source_read import jax_root

        root = jax_root()
    parts = literal_parts(template)
    if root is None or not parts:
        return []
    hits = [SourceTemplate(str(f.relative_to(root)), line, text, raised)
            for f in source_files(root) for line, text, raised in _file_strings(f)
            if _matches(parts, text)]
    return sorted(hits, key=lambda h: (not h.raised, h.path, h.line))


def statement(code: str, root: Path | None = None, files: list[str] | None = None) -> list[tuple[str, int]]:
    """Where a bare statement (`assert b_transforms is not None`, `raise NotImplementedError`) is
    in the installed source, compared as syntax (not text): [(path, line)], searched in `files`
    (relative to the package) or everywhere `find` searches."""
    if root is None:
        from wgmma_lsp.interpret.jax_source_read import jax_root

        root = jax_root()
    if root is None:
        return []
    want = ast.dump(ast.parse(code).body[0])
    paths = [root / f for f in files] if files else source_files(root)
    return [(str(f.relative_to(root)), line) for f in paths for line, dump in _statements(f) if dump == want]


@functools.lru_cache(maxsize=None)
def _statements(path: Path) -> tuple[tuple[int, str], ...]:
    try:
        tree = ast.parse(observed.read_text(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return ()
    return tuple((n.lineno, ast.dump(n)) for n in ast.walk(tree) if isinstance(n, (ast.Assert, ast.Raise)))


def named_files(jax_source: str) -> list[str]:
    """The files a rule's `jax_source` names (`jax/_src/pallas/mosaic_gpu/core.py: f`), relative
    to the package."""
    return [m.removeprefix("jax/") for m in re.findall(r"jax/[\w/]+\.py", jax_source)]

"""Entry points for tracing: `# wgmma-lsp: trace CALL` comments, pyproject.toml, compact specs.

An entry point names a call that JAX should trace, with example arguments:

    # wgmma-lsp: trace matmul(jax.ShapeDtypeStruct((256, 256), jnp.bfloat16), bf16[256,512])

The call is evaluated in the module's namespace. Compact specs such as `bf16[256,256]` stand
for `jax.ShapeDtypeStruct((256, 256), jnp.bfloat16)`.

Entry points can also be listed in the nearest `pyproject.toml` above the file, each as
`"PATH:CALL"` with PATH relative to that pyproject.toml:

    [tool.wgmma-lsp]
    trace = [
        "kernels/matmul.py:matmul(bf16[256,256], bf16[256,512])",
        "kernels/matmul.py:matmul(f16[128,64], f16[64,128])",
    ]

This module only parses: it never imports JAX or user code, so the static server can use it
freely.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp import observed
from wgmma_lsp import toml_cache
from wgmma_lsp.lazy_re import LazyPattern

ENTRY_RE = LazyPattern(r"^\s*#\s*wgmma-lsp:\s*trace\s+(?P<call>.+?)\s*$")

#: Short and long dtype spellings accepted in compact specs, mapped to numpy/JAX dtype names.
DTYPE_ALIASES: dict[str, str] = {
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
    "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
    "bool": "bool",
}
for _name in list(set(DTYPE_ALIASES.values())):
    DTYPE_ALIASES.setdefault(_name, _name)

# (compiled at the first entry point: ~0.4 ms, the alternation of every alias)
_SPEC_RE = LazyPattern(
    r"(?<![\w.])(?P<dtype>" + "|".join(sorted(map(re.escape, DTYPE_ALIASES), key=len, reverse=True))
    + r")\[(?P<dims>[\d\s,]*)\]"
)


@dataclass(frozen=True)
class EntryPoint:
    """One call to trace: its source text and where it was declared (0-based line, or None)."""

    call: str
    line: int | None = None
    origin: str = "comment"  # "comment" or "pyproject"
    config_path: str | None = None  # the pyproject.toml that declared it (origin "pyproject")

    @property
    def label(self) -> str:
        """How notes name the entry point: its call, and where it was declared."""
        where = (f"line {self.line + 1}" if self.origin == "comment" and self.line is not None
                 else f"{self.config_path or 'pyproject.toml'}" + (
                     f":{self.line + 1}" if self.line is not None else ""))
        return f"`{self.call}` ({where})"

    @property
    def expression(self) -> str:
        """The call with compact specs rewritten to `__wgmma_spec__(dtype, shape)` calls."""
        return rewrite_compact_specs(self.call)


def rewrite_compact_specs(text: str) -> str:
    """Rewrite `bf16[64,128]` to `__wgmma_spec__('bfloat16', (64, 128))`; leave the rest alone."""

    def repl(m: re.Match[str]) -> str:
        dims = [d.strip() for d in m.group("dims").split(",") if d.strip()]
        shape = "(" + "".join(f"{d}, " for d in dims) + ")"
        return f"__wgmma_spec__({DTYPE_ALIASES[m.group('dtype')]!r}, {shape})"

    return _SPEC_RE.sub(repl, text)


def parse_entry_points(source: str) -> list[EntryPoint]:
    """All `# wgmma-lsp: trace ...` lines of a file, in order."""
    out = []
    for i, line in enumerate(source.splitlines()):
        if "wgmma-lsp" not in line:
            continue
        m = ENTRY_RE.match(line)
        if m:
            out.append(EntryPoint(m.group("call"), i))
    return out


PYPROJECT_KEY = "trace"  # [tool.wgmma-lsp] trace = ["path.py:call(...)", ...]
_PYPROJECT_ITEM = LazyPattern(r"^\s*(?P<file>[^:]+?\.pyi?)\s*:\s*(?P<call>.+?)\s*$")


def find_pyproject(path: str | os.PathLike[str]) -> Path | None:
    """The nearest pyproject.toml in the file's folder or above it."""
    here = Path(path).resolve().parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if observed.isfile(candidate):
            return candidate
    return None


def pyproject_entry_points(path: str | os.PathLike[str],
                           pyproject: Path | None = None) -> list[EntryPoint]:
    """Entry points that `[tool.wgmma-lsp] trace` in the nearest pyproject.toml lists for `path`.

    A malformed pyproject.toml, or an item that is not `"PATH:CALL"`, is ignored.
    """
    pyproject = pyproject or find_pyproject(path)
    if pyproject is None:
        return []
    try:
        raw = observed.read_bytes(pyproject)
        text = raw.decode("utf-8")
        table = toml_cache.pyproject_table(raw)
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    items = table.get(PYPROJECT_KEY, []) if isinstance(table, dict) else []
    if not isinstance(items, list):
        return []
    target = _norm(Path(path))
    lines = text.splitlines()
    out = []
    for item in items:
        if not isinstance(item, str):
            continue
        m = _PYPROJECT_ITEM.match(item)
        if not m or _norm(pyproject.parent / m.group("file")) != target:
            continue
        line = next((i for i, ln in enumerate(lines) if item in ln), None)
        out.append(EntryPoint(m.group("call"), line, "pyproject", str(pyproject)))
    return out


def all_entry_points(source: str, path: str | os.PathLike[str] | None) -> list[EntryPoint]:
    """The file's comment entry points, then those its pyproject.toml lists for it."""
    found = parse_entry_points(source)
    if path is not None:
        found.extend(pyproject_entry_points(path))
    return found


def _norm(p: Path) -> str:
    try:
        return os.path.normcase(str(p.resolve()))
    except OSError:
        return os.path.normcase(os.path.abspath(p))

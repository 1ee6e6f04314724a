"""Entry points for tracing: `# wgmma-lsp: trace CALL` comment lines and compact array specs.

An entry point names a call that JAX should trace, with example arguments:

    # wgmma-lsp: trace matmul(jax.ShapeDtypeStruct((256, 256), jnp.bfloat16), bf16[256,512])

The call is evaluated in the module's namespace. Compact specs such as `bf16[256,256]` stand
for `jax.ShapeDtypeStruct((256, 256), jnp.bfloat16)`. This module only parses: it never
imports JAX or user code, so the static server can use it freely.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENTRY_RE = re.compile(r"^\s*#\s*wgmma-lsp:\s*trace\s+(?P<call>.+?)\s*$")

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

_SPEC_RE = re.compile(
    r"(?<![\w.])(?P<dtype>" + "|".join(sorted(map(re.escape, DTYPE_ALIASES), key=len, reverse=True))
    + r")\[(?P<dims>[\d\s,]*)\]"
)


@dataclass(frozen=True)
class EntryPoint:
    """One call to trace: its source text and where it was declared (0-based line, or None)."""

    call: str
    line: int | None = None
    origin: str = "comment"  # "comment" or "pyproject"

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

"""Hover text pieces: Markdown escaping, a value in JAX's spelling, records by line (shared by
the hover, the API help and the signature help)."""

from __future__ import annotations

import re

from wgmma_lsp.analysis import Analysis, ValueRecord
from wgmma_lsp.interpret.values import (
    AllocSpec, ApiVal, ArrayVal, ClassVal, Const, DTypeVal, FuncVal, ModuleVal, Opaque, RefVal,
    ShapeDtypeVal, SymInt, TransformVal, TupleVal, Unknown, Value,
)

def escape(text: str) -> str:
    """Text shown literally in Markdown (CommonMark, as VS Code renders hovers): backslashes,
    backticks, `*`, `<`, a `_` that could open or close emphasis (`__main__`; not the one inside
    `sm_90`), `~~`, brackets where they could make a link, a `#` starting the text."""
    out = []
    link = "](" in text
    for i, c in enumerate(text):
        before, after = text[i - 1] if i else " ", text[i + 1] if i + 1 < len(text) else " "
        if c in "\\`*<" or (c == "_" and not (before.isalnum() and after.isalnum())) \
                or (c == "~" and "~" in (before, after)) or (c in "[]" and link) or (c == "#" and i == 0):
            out.append("\\")
        out.append(c)
    return "".join(out)


_CODE_SPAN = re.compile(r"(`+)[^`]+?\1")


def escape_prose(text: str) -> str:
    """Authored text whose `code spans` are meant as code: everything outside them escaped."""
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [escape(text[pos:m.start()]), m.group(0)]
        pos = m.end()
    return "".join(out + [escape(text[pos:])])


_KIND_ORDER = {"name": 0, "store": 0, "attr": 1, "subscript": 2, "call": 3, "expr": 4, "def": 0}


def _by_line(analysis: Analysis) -> dict[int, list[ValueRecord]]:
    """Records indexed by each line they cover (built once per analysis)."""
    index = analysis.cache.get("records_by_line")
    if index is None:
        index = {}
        for span, rec in analysis.records.items():
            for ln in range(span.line, min(span.end_line, span.line + 200) + 1):
                index.setdefault(ln, []).append(rec)
        analysis.cache["records_by_line"] = index
    return index


def describe(v: Value) -> str | None:
    """A value in JAX's spelling, or None when nothing is known."""
    if isinstance(v, (ArrayVal, RefVal)):
        return v.describe()
    if isinstance(v, AllocSpec):
        return v.describe()
    if isinstance(v, ShapeDtypeVal):
        return v.describe()
    if isinstance(v, DTypeVal):
        return f"dtype {v.dtype.name}"
    if isinstance(v, Const):
        return repr(v.value) if not isinstance(v.value, range) else str(v.value)
    if isinstance(v, SymInt):
        return f"int = {v.dim}"
    if isinstance(v, TupleVal):
        parts = [describe(i) or "?" for i in v.items]
        if len(parts) > 8:
            parts = parts[:8] + ["…"]
        inner = ", ".join(parts)
        return f"[{inner}]" if v.is_list else f"({inner}{',' if len(parts) == 1 else ''})"
    if isinstance(v, FuncVal):
        return f"def {v.name}(…)" if v.name != "<lambda>" else "lambda"
    if isinstance(v, ClassVal):
        return f"class {v.name}"
    if isinstance(v, ApiVal):
        return v.name
    if isinstance(v, ModuleVal):
        return f"module {v.name}"
    if isinstance(v, TransformVal):
        return v.describe()
    if isinstance(v, (Unknown, Opaque)):
        return None
    shown = getattr(v, "hover_text", None)  # model-defined values (e.g. NDLoopInfo)
    return shown() if callable(shown) else None


def _code(text: str) -> str:
    """A Markdown code span holding `text` exactly (a fence longer than any run of backticks in it)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


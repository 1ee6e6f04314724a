"""An error-tolerant parse: a file with a half-typed line still yields the functions that parse."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.spans import Span

MAX_REPAIRS = 30


@dataclass
class Parsed:
    tree: ast.Module
    errors: list[tuple[Span, str]] = field(default_factory=list)
    repaired: bool = False


def parse(source: str) -> Parsed:
    """Parse; on a syntax error, neutralise the offending line (keeping its indentation) and retry."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return Parsed(ast.parse(source, type_comments=False))
    except (SyntaxError, ValueError) as e:
        first = e
    except (RecursionError, MemoryError):  # absurdly nested input: nothing to analyse
        return Parsed(ast.Module(body=[], type_ignores=[]), [(Span(0, 0, 0, 0), "too deeply nested")], True)
    lines = source.split("\n")
    errors: list[tuple[Span, str]] = []
    err: BaseException = first
    for _ in range(MAX_REPAIRS):
        lineno = getattr(err, "lineno", None) or 1
        i = min(max(lineno - 1, 0), len(lines) - 1) if lines else 0
        msg = getattr(err, "msg", str(err))
        errors.append((Span(i, 0, i, len(lines[i]) if lines else 0), msg))
        if not lines:
            break
        line = lines[i]
        indent = line[: len(line) - len(line.lstrip())]
        stripped = line.strip()
        # A block header whose body is gone still needs a body: `pass` keeps the indentation valid.
        lines[i] = indent + ("pass" if stripped else "")
        try:
            return Parsed(ast.parse("\n".join(lines)), errors, True)
        except (SyntaxError, ValueError) as e:
            err = e
        except (RecursionError, MemoryError):
            break
    # Last resort: the longest prefix that parses.
    for cut in range(len(lines), 0, -1):
        try:
            return Parsed(ast.parse("\n".join(lines[:cut])), errors, True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return Parsed(ast.Module(body=[], type_ignores=[]), errors, True)

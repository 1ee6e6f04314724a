"""The text of a Python file as the tolerant parse reads it (`syntax.py`): indentation, which
lines start outside brackets and strings, statement chunks, skeletons of compound statements."""

from __future__ import annotations

import ast
import re

from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.spans import Span

MAX_REPORTED = 50  # syntax errors reported per file (all broken regions are neutralised)
# A block whose header is broken is kept as the body of a function of this name (and its line)
# that nobody calls: analysed with nothing known (the driver knows the ones a `main` held).
ORPHAN_PREFIX = "_wgmma_orphan_"
MAX_HEADER_LINES = 40  # lines a broken header (decorators, a long signature) is looked at over

_COMPOUND = {"if_stmt", "while_stmt", "for_stmt", "try_stmt", "with_stmt", "funcdef", "classdef",
             "decorated", "async_stmt", "async_funcdef", "match_stmt"}
_ERRORS = {"error_node", "error_leaf"}


TOO_DEEP = "too deeply nested"  # a statement CPython's parser cannot take (RecursionError)


_Errors = list[tuple[Span, str]]


def _detached(e: BaseException) -> BaseException:
    """An exception kept after its `except` block, without its traceback: the traceback holds
    the frames of the parse and every caller's (the analysis, its interpreter, the trees), and
    the exception is a local of one of those frames — a reference cycle that would leave the
    whole analysis to the garbage collector (a pause of hundreds of milliseconds on a random
    later keystroke) instead of being freed when it is dropped."""
    e.__traceback__ = None
    e.__context__ = None
    return e


def _indent(line: str) -> int:
    """The column of a line's first character that is not whitespace."""
    return len(line) - len(line.lstrip())


def _orphan_header(line: int) -> str:
    """The `def` line of the function nobody calls that holds a block whose header broke at
    (1-based) `line`."""
    return f"def {ORPHAN_PREFIX}{line}():"


def _is_code(line: str) -> bool:
    """Is there code on the line (not blank, not only a comment)?"""
    stripped = line.lstrip()
    return bool(stripped) and not stripped.startswith("#")


def _next_code_line(lines: list[str], start: int, stop: int | None = None) -> int | None:
    """The first line from `start` (before `stop`) with code on it."""
    return next((i for i in range(start, len(lines) if stop is None else stop) if _is_code(lines[i])), None)


def _wrap(chunk: list[str], c: int, indent: int, pad: bool) -> str:
    """Source text for lines starting at line `c` at column `indent`: an indented block is put
    under an `if 1:` on the line above (the header's line, not part of the chunk); `pad` keeps
    the file's own line numbers by leaving the lines above empty."""
    text = "\n".join(chunk)
    if indent:
        text = "if 1:\n" + text
        return "\n" * (c - 1) + text if pad else text
    return "\n" * c + text if pad else text


def _body_of(tree: ast.Module, indent: int) -> list[ast.stmt]:
    if not indent:
        return tree.body
    node = tree.body[0] if tree.body else None
    return node.body if isinstance(node, ast.If) else []


def _clauses(lines: list[str], outside: list[bool], starts: list[int], d: int, indent: int,
             is_def: bool) -> list[tuple[int, int, int, int]] | None:
    """Per clause starting at `starts` (a compound statement's `if`/`elif`/`else`/...): the last
    line of its header, the first line of its block, the block's indentation and the line after
    the block. None if a header does not end where its block starts."""
    clauses: list[tuple[int, int, int, int]] = []
    for n, s in enumerate(starts):
        e = starts[n + 1] if n + 1 < len(starts) else d
        h = s
        while h + 1 < e and not outside[h + 1]:
            h += 1
        m = _next_code_line(lines, h + 1, e)
        if m is None:
            return None
        # The block's column: its first line's, or the least column up to it that two of its
        # statements start at (a first line indented a column too deep, or one line too
        # shallow, is one misindented statement of the block).
        first_col = _indent(lines[m])
        counts: dict[int, int] = {}
        for i in range(m, e):
            t = lines[i]
            col = _indent(t)
            if indent < col <= first_col and outside[i] and _is_code(t):
                counts[col] = counts.get(col, 0) + 1
        body_indent = min((col for col, n in counts.items() if n > 1), default=first_col)
        if body_indent <= indent or lines[h].rstrip().endswith("\\"):
            return None
        if not is_def and any(_indent(t) <= indent and t.strip() and t.lstrip()[0] not in "#)]}"
                              for t in lines[m + 1:e]):
            return None  # a line at the header's column inside the block: a bracket left open
        clauses.append((h, m, body_indent, e))
    return clauses


def _block_by_indent(lines: list[str], k: int, d: int, indent: int) -> tuple[int, int] | None:
    """The block of a header at line `k` found by indentation alone: its lines are those at the
    least indentation deeper than the header's (a signature's lines sit deeper than the body's,
    or at the same depth, where they are read as statements and repaired as such)."""
    cols = [(_indent(lines[i]), i) for i in range(k + 1, d) if _is_code(lines[i])]
    deeper = [col for col, _ in cols if col > indent]
    if not deeper:
        return None
    b = min(deeper)
    return next(i for col, i in cols if col == b), b


def _skeleton(skeleton: list[str], c: int, indent: int) -> tuple[ast.stmt | None, BaseException | None]:
    """The one compound statement a skeleton (headers, each block a `pass`) parses to, or
    CPython's error for it (the headers' error; (None, None) if it is not one statement)."""
    try:
        tree = ast.parse(_wrap(skeleton, c, indent, True), type_comments=False)
    except (SyntaxError, ValueError) as e:
        return None, _detached(e)
    except (RecursionError, MemoryError):
        return None, None
    nodes = _body_of(tree, indent)
    return (nodes[0] if len(nodes) == 1 and isinstance(nodes[0], _COMPOUND_NODES) else None), None


def statement_chunks(lines: list[str], outside: list[bool], a: int, b: int,
                     indent: int) -> list[tuple[int, int]]:
    """Lines [a, b) cut before every line that starts a statement at column `indent` (outside
    strings and brackets; `else`/`except`/... and decorated definitions stay with theirs)."""
    cuts = [a]
    first = lines[a] if a < len(lines) else ""
    decorators = first[indent:indent + 1] == "@"  # the chunk so far holds only decorators
    for i in range(a + 1, b):
        line = lines[i]
        if indent and outside[i] and _indent(line) < indent and line.strip() and \
                line.lstrip()[0] not in "#)]}" and not lines[i - 1].endswith("\\"):
            cuts.append(i)  # a statement at no block's column (`_statement` says so)
            decorators = False
            continue
        if len(line) <= indent or line[indent] in " \t#)]}" or not outside[i]:
            continue
        if indent and line[:indent].strip():
            continue
        if lines[i - 1].endswith("\\") or _CONTINUATION.match(line, indent):
            continue
        is_def = _DEF.match(line, indent) is not None
        if decorators and (line[indent] == "@" or is_def):
            decorators = not is_def
            continue
        cuts.append(i)
        decorators = line[indent] == "@"
    cuts.append(b)
    return [(x, y) for x, y in zip(cuts, cuts[1:]) if x < y]


# -- top-level statements -------------------------------------------------------------------

_SCAN = LazyPattern(r'"""|' + r"'''|#[^\n]*|" + r'"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'|[()\[\]{}]|\n")
_CONTINUATION = LazyPattern(r"(?:else|elif|except|finally)\b")
_DEF = LazyPattern(r"(?:def|class|async\s+def)\b")
_COMPOUND_START = LazyPattern(r"(?:def|class|async|if|elif|else|for|while|with|try|except|finally|match|case)\b")
_ALWAYS_RUNS = LazyPattern(r"(?:try|with|async\s+with)\b")
_BLOCK_HEADER = LazyPattern(r"(?:def|class|if|for|while|with|try|async\s+(?:def|for|with))\b")
_COMPOUND_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
                   ast.While, ast.With, ast.AsyncWith, ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else []))
_INDENTED_DEF = LazyPattern(r"[ \t]*(?:def|class|async\s+def)\s")
# A compound statement's header at column 0 (`if __name__ == "__main__":`): in code that fails to
# parse, a line like this inside brackets is a bracket left open above it, not a continuation.
_TOP_HEADER = LazyPattern(r"(?:if|for|while|with|try|async[ \t]+(?:for|with))\b[^\n#]*:[ \t]*(?:#[^\n]*)?$",
                          re.M)
# A line only a statement can start with (a keyword no expression holds, an augmented
# assignment): back at the indentation of the line a bracket was opened on (or further left),
# it is a bracket left open above it, not a continuation.
_STATEMENT_ONLY = LazyPattern(r"[ \t]*(?:(?:return|assert|raise|del|pass|break|continue|import|global|"
                              r"nonlocal|try|while|with|elif|except|finally)\b"
                              r"|[\w.\[\]]+[ \t]*(?:[-+*/%@&|^]|//|\*\*|<<|>>)=)")


def _line_starts_outside(source: str, n_lines: int) -> list[bool]:
    """For each line, whether it starts outside strings and brackets (`def` and `class` lines,
    column-0 decorators and column-0 compound headers reset the bracket count: they cannot be,
    or in practice are not, inside brackets)."""
    out = [True] * n_lines
    opened: list[str] = []  # the brackets open, innermost last
    opened_at = 0  # the indentation of the line the outermost of them was opened on
    line_start = 0
    line = 0
    pos = 0
    n = len(source)
    while pos < n:
        m = _SCAN.search(source, pos)
        if m is None:
            break
        tok = m.group()
        pos = m.end()
        if tok == "\n":
            line += 1
            line_start = pos
            if line < n_lines:
                if opened and (source.startswith("@", pos) or _INDENTED_DEF.match(source, pos)
                               or _TOP_HEADER.match(source, pos)
                               or _dedented_out_of_brackets(source, pos, opened_at)):
                    opened.clear()  # a definition cannot start inside brackets: one was left open
                out[line] = not opened
        elif tok == '"""' or tok == "'''":
            end = _triple_end(source, pos, tok)
            skipped = source.count("\n", pos, end)
            for k in range(line + 1, min(line + skipped, n_lines - 1) + 1):
                out[k] = False
            line += skipped
            pos = end
        elif tok in "([{":
            if not opened:
                opened_at = _column(source, line_start)
            opened.append(tok)
        elif opened and tok in _OPENER:
            # A closing bracket closes the innermost bracket of its kind: those opened inside it
            # were left open (`f(x, [` then `)`); one of no open kind closes the innermost.
            want = _OPENER[tok]
            k = len(opened) - 1
            while k >= 0 and opened[k] != want:
                k -= 1
            del opened[max(k, len(opened) - 1 if k < 0 else k):]
    return out


_OPENER = {")": "(", "]": "[", "}": "{"}


def _dedented_out_of_brackets(source: str, pos: int, opened_at: int) -> bool:
    """Inside brackets, does the line at `pos` start a statement instead? Continuation lines sit
    deeper than the line the bracket was opened on (a closing bracket back at its column); a
    line further left, or one back at that column that only a statement starts with (a keyword
    no expression holds, an assignment), means the bracket was left open above it."""
    col = _column(source, pos)
    if col > opened_at or source.startswith((")", "]", "}", "#", "\n"), pos + col):
        return False
    return bool(_STATEMENT_ONLY.match(source, pos) or _ASSIGNMENT.match(source, pos))


_ARGUMENT_LINE = LazyPattern(r"\w[^#]*,\s*(?:#.*)?$")  # `x, y,` / `f(a), k=1,`: a line of arguments
_ASSIGNMENT = LazyPattern(r"[ \t]*[\w.]+(?:\[[^\]\n]*\])?(?:[ \t]*,[ \t]*[\w.]+)*[ \t]+=[ \t]+(?!=)")


def _column(source: str, line_start: int) -> int:
    """The indentation of the line starting at `line_start`."""
    end = line_start
    while end < len(source) and source[end] in " \t":
        end += 1
    return end - line_start


def _triple_end(source: str, pos: int, quote: str) -> int:
    """The position after the closing quote of a triple-quoted string (the end if none)."""
    while True:
        i = source.find(quote, pos)
        if i < 0:
            return len(source)
        k = i
        while k > pos and source[k - 1] == "\\":
            k -= 1
        if (i - k) % 2 == 0:
            return i + 3
        pos = i + 1


def _error_line(err: BaseException, n_lines: int) -> int:
    lineno = getattr(err, "lineno", None) or 1
    return min(max(lineno - 1, 0), max(n_lines - 1, 0))

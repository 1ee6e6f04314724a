"""An error-tolerant parse in one linear pass: a file with half-typed lines keeps every statement
that parses.

`ast.parse` is tried first (the happy path, and the fastest). When it fails, parso (jedi's
error-recovering parser) parses the file once; every statement it could not parse (and every
statement at an indentation its block does not allow) is blanked line by line, a `pass` at the
block's indentation keeps the block valid, and `ast.parse` runs once more. Columns and line
numbers of the statements that were kept do not move, so spans stay exact.

Only when CPython and parso disagree (CPython rejects what parso accepts, such as `1 = x`) does a
further, bounded number of passes blank the statement CPython names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator

from wgmma_lsp.spans import Span

MAX_DISAGREEMENTS = 4  # extra parses when CPython rejects a statement parso accepted
MAX_REPORTED = 50  # syntax errors reported per file (all broken regions are neutralised)

_COMPOUND = {"if_stmt", "while_stmt", "for_stmt", "try_stmt", "with_stmt", "funcdef", "classdef",
             "decorated", "async_stmt", "async_funcdef", "match_stmt"}
_ERRORS = {"error_node", "error_leaf"}


@dataclass
class Parsed:
    tree: ast.Module
    errors: list[tuple[Span, str]] = field(default_factory=list)
    repaired: bool = False


@dataclass
class _Item:
    """A statement of a block: its lines (0-based, inclusive) and whether it parsed."""

    first: int
    last: int
    block: int  # index of its block in `_Blocks.indents`
    broken: bool
    depth: int
    rescued: bool = False  # parso called it an error, CPython parses it alone


class _Blocks:
    """The statements of every block of a parso tree, classified in one walk."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.items: list[_Item] = []
        self.indents: list[int] = []  # per block: the column its statements must start at
        self.headers: list[tuple[int, int]] = []  # (line, column) of synthetic `def` headers

    def add_block(self, children: list[Any], header_col: int, depth: int) -> None:
        stmts = [c for c in children if c.type not in ("newline", "endmarker")
                 and not (c.type == "error_leaf" and c.start_pos == c.end_pos)]
        if not stmts:
            return
        good = [c for c in stmts if c.type not in _ERRORS]
        col = good[0].start_pos[1] if good else stmts[0].start_pos[1]
        if header_col >= 0 and col <= header_col:
            col = header_col + 4
        if header_col < 0:
            col = 0
        block = len(self.indents)
        self.indents.append(col)
        orphans = -1  # the block of statements left indented after a broken header, if any
        for c in stmts:
            c_col = c.start_pos[1]
            if c.type not in _ERRORS and c_col > col and self._starts_line(c):
                if orphans >= 0 and self.indents[orphans] == c_col:
                    self.add_stmt(c, orphans, c_col, depth + 1)
                    continue
                prev = self.items[-1] if self.items else None
                if prev is not None and prev.block == block and prev.broken and prev.last < c.start_pos[0] - 1:
                    # The body of a header that did not parse: kept, as the body of a function
                    # nobody calls (analysed with nothing known, like any uncalled function).
                    orphans = len(self.indents)
                    self.indents.append(c_col)
                    self.headers.append((prev.last, col))
                    self.add_stmt(c, orphans, c_col, depth + 1)
                    continue
            orphans = -1
            self.add_stmt(c, block, col, depth)

    def _parses_alone(self, first: int, last: int, col: int) -> bool:
        """Whether the whole lines of a statement parse on their own (linear: each line is
        looked at by at most one such check)."""
        chunk = self.lines[first:last + 1]
        if not chunk:
            return False
        text = "\n".join(chunk)
        if col > 0:
            text = "if True:\n" + text
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return True

    def _starts_line(self, node: Any) -> bool:
        row, start = node.start_pos
        return row - 1 < len(self.lines) and self.lines[row - 1][:start].strip() == ""

    def add_stmt(self, node: Any, block: int, col: int, depth: int) -> None:
        (row, start), (end_row, end_col) = node.start_pos, node.end_pos
        first = row - 1
        last = end_row - 1 if end_col > 0 or end_row == row else end_row - 2
        line = self.lines[first] if first < len(self.lines) else ""
        misplaced = start != col or line[:start].strip() != ""
        if node.type == "error_node" and not misplaced and self._parses_alone(first, last, start):
            # parso lost its way (after an unterminated string, say) but the statement is whole.
            self.items.append(_Item(first, last, block, False, depth, rescued=True))
            return
        if node.type in _ERRORS or misplaced:
            self.items.append(_Item(first, last, block, True, depth))
            return
        if node.type not in _COMPOUND:
            self.items.append(_Item(first, last, block, _has_error(node), depth))
            return
        # A compound statement: its header must parse; its blocks are classified on their own.
        suites: list[Any] = []
        if _header_broken(node, suites):
            self.items.append(_Item(first, last, block, True, depth))
            return
        header_last = (suites[0][0].start_pos[0] - 1) if suites else last
        self.items.append(_Item(first, max(first, header_last), block, False, depth))
        for suite, header in suites:
            self.add_block(suite.children, header, depth + 1)


def _header_broken(node: Any, suites: list[Any]) -> bool:
    """True if anything outside the statement's blocks failed to parse; collects the blocks
    (with the column of the header that opens each)."""
    for child in node.children:
        if child.type == "suite":
            suites.append((child, node.start_pos[1]))
        elif child.type in _COMPOUND:
            if _header_broken(child, suites):
                return True
        elif _has_error(child):
            return True
    return False


def _has_error(node: Any) -> bool:
    if node.type in _ERRORS:
        return True
    stack = list(getattr(node, "children", ()))
    while stack:
        n = stack.pop()
        if n.type in _ERRORS:
            return True
        children = getattr(n, "children", None)
        if children:
            stack.extend(children)
    return False


def parse(source: str) -> Parsed:
    """Parse; broken statements are neutralised (blanked, keeping every other line in place)."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return Parsed(ast.parse(source, type_comments=False))
    except (SyntaxError, ValueError) as e:
        first = e
    except (RecursionError, MemoryError):  # absurdly nested input: nothing to analyse
        return _nothing("too deeply nested")
    lines = source.split("\n")
    try:
        blocks = _classify(source, lines)
    except (RecursionError, MemoryError):
        return _nothing("too deeply nested")
    broken = {i for i, it in enumerate(blocks.items) if it.broken}
    _mark_line(blocks, broken, _error_line(first, len(lines)))
    tree: ast.Module | None = None
    rescued_given_up = False
    for attempt in range(MAX_DISAGREEMENTS + 2):
        if attempt == MAX_DISAGREEMENTS and not rescued_given_up:
            rescued_given_up = True
            broken.update(i for i, it in enumerate(blocks.items) if it.rescued)
        text = _neutralised(lines, blocks, broken)
        try:
            tree = ast.parse(text, type_comments=False)
            break
        except (SyntaxError, ValueError) as e:
            if not _mark_line(blocks, broken, _error_line(e, len(lines))):
                if rescued_given_up:
                    break
                # Last resort: trust parso wherever it disagreed with CPython.
                rescued_given_up = True
                broken.update(i for i, it in enumerate(blocks.items) if it.rescued)
        except (RecursionError, MemoryError):
            break
    errors = _errors(first, lines, blocks, broken)
    if tree is None:
        tree = ast.Module(body=[], type_ignores=[])
    return Parsed(tree, errors, True)


def _nothing(message: str) -> Parsed:
    return Parsed(ast.Module(body=[], type_ignores=[]), [(Span(0, 0, 0, 0), message)], True)


def _classify(source: str, lines: list[str]) -> _Blocks:
    import parso

    module = parso.load_grammar().parse(source, error_recovery=True, cache=False)
    blocks = _Blocks(lines)
    blocks.add_block(module.children, -1, 0)
    return blocks


def _error_line(err: BaseException, n_lines: int) -> int:
    lineno = getattr(err, "lineno", None) or 1
    return min(max(lineno - 1, 0), max(n_lines - 1, 0))


def _mark_line(blocks: _Blocks, broken: set[int], line: int) -> bool:
    """Mark the innermost statement holding `line` broken; False if there is nothing new to mark."""
    best: int | None = None
    for i, it in enumerate(blocks.items):
        if it.first <= line <= it.last and (best is None or it.depth > blocks.items[best].depth):
            best = i
    if best is None or best in broken:
        return False
    broken.add(best)
    return True


def _neutralised(lines: list[str], blocks: _Blocks, broken: set[int]) -> str:
    """The source with every broken statement's lines blanked and one `pass` per run of broken
    statements of a block (so that a block whose statements all broke still has a body)."""
    out = list(lines)
    for i in broken:
        it = blocks.items[i]
        for k in range(it.first, min(it.last, len(out) - 1) + 1):
            out[k] = ""
    passes: set[int] = set()
    for line, col in blocks.headers:
        if not out[line] and line not in passes:
            out[line] = " " * col + f"def _wgmma_orphan_{line + 1}():"
            passes.add(line)
    prev_block = -1
    prev_broken = False
    for i, it in enumerate(blocks.items):
        if i not in broken:
            prev_broken = False
            prev_block = it.block
            continue
        if not (prev_broken and prev_block == it.block):
            target = it.first
            while target in passes and target < it.last:
                target += 1
            if target not in passes and target < len(out):
                out[target] = " " * blocks.indents[it.block] + "pass"
                passes.add(target)
        prev_broken = True
        prev_block = it.block
    return "\n".join(out)


def _runs(blocks: _Blocks, broken: set[int]) -> Iterator[tuple[int, int]]:
    """Maximal line ranges covered by broken statements."""
    spans = sorted((blocks.items[i].first, blocks.items[i].last) for i in broken)
    cur: list[int] | None = None
    for a, b in spans:
        if cur is not None and a <= cur[1] + 1:
            cur[1] = max(cur[1], b)
            continue
        if cur is not None:
            yield cur[0], cur[1]
        cur = [a, b]
    if cur is not None:
        yield cur[0], cur[1]


def _errors(first: BaseException, lines: list[str], blocks: _Blocks,
            broken: set[int]) -> list[tuple[Span, str]]:
    """One error per broken region: CPython's own message and position for the first error,
    and for each other region the message CPython gives for that region alone."""
    out: list[tuple[Span, str]] = []
    first_span = _span_of(first, lines)
    out.append((first_span, getattr(first, "msg", None) or str(first)))
    for a, b in _runs(blocks, broken):
        if len(out) >= MAX_REPORTED:
            break
        if a <= first_span.line <= b:
            continue
        out.append(_region_error(lines, a, b))
    out.sort(key=lambda e: (e[0].line, e[0].col))
    return out


def _span_of(err: BaseException, lines: list[str]) -> Span:
    line = _error_line(err, len(lines))
    text = lines[line] if line < len(lines) else ""
    offset = getattr(err, "offset", None)
    col = min(max((offset or 1) - 1, 0), len(text))
    end_line = getattr(err, "end_lineno", None)
    end_offset = getattr(err, "end_offset", None)
    if end_line is not None and end_offset is not None and end_line - 1 == line and end_offset - 1 > col:
        return Span(line, col, line, min(end_offset - 1, len(text)))
    indent = len(text) - len(text.lstrip())
    return Span(line, min(col, len(text)), line, len(text)) if col < len(text) else Span(line, indent, line, len(text))


def _region_error(lines: list[str], a: int, b: int) -> tuple[Span, str]:
    """CPython's message for a broken region parsed on its own (small: linear in the region)."""
    chunk = lines[a:b + 1]
    indent = min((len(s) - len(s.lstrip()) for s in chunk if s.strip()), default=0)
    text = "\n" * a + "\n".join(s[indent:] for s in chunk)  # CPython names the real lines
    msg = "invalid syntax"
    span = Span(a, indent, b, len(lines[b]) if b < len(lines) else 0)
    try:
        ast.parse(text)
    except SyntaxError as e:
        msg = e.msg or msg
        if e.lineno is not None:
            line = e.lineno - 1
            if a <= line <= b:
                col = indent + max((e.offset or 1) - 1, 0)
                ln = lines[line]
                if col >= len(ln):
                    col = len(ln) - len(ln.lstrip())
                span = Span(line, col, line, len(ln))
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        line = lines[a]
        span = Span(a, len(line) - len(line.lstrip()), b, len(lines[b]))
        msg = "invalid syntax here" if not _misindented_message(lines, a) else "unexpected indent"
    return span, msg


def _misindented_message(lines: list[str], a: int) -> bool:
    return bool(lines[a]) and lines[a][0] in " \t"

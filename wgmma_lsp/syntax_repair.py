"""Repairing a file CPython rejects (`syntax.py`): quick edits of one statement's lines, and
parso's error recovery (each broken statement blanked, a `pass` keeping its block)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from wgmma_lsp.spans import Span
from wgmma_lsp.syntax_spans import _past_the_end, _region_error, _span_of
from wgmma_lsp.syntax_text import (
    _ARGUMENT_LINE,
    _COMPOUND,
    _COMPOUND_START,
    _ERRORS,
    MAX_HEADER_LINES,
    MAX_REPORTED,
    TOO_DEEP,
    _detached,
    _error_line,
    _indent,
    _is_code,
    _line_starts_outside,
    _orphan_header,
    _wrap,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Iterator

MAX_DISAGREEMENTS = 4  # extra parses when CPython rejects a statement parso accepted
MAX_QUICK = 3  # lines of one statement blanked one by one before parso is asked


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

    def __init__(self, lines: list[str], row_offset: int = 0) -> None:
        self.lines = lines
        self.row_offset = row_offset  # parso's rows are of a text without the padding above
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
                if prev is not None and prev.block == block and prev.broken and \
                        prev.last < c.start_pos[0] + self.row_offset - 1:
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
        row += self.row_offset
        return row - 1 < len(self.lines) and self.lines[row - 1][:start].strip() == ""

    def add_stmt(self, node: Any, block: int, col: int, depth: int) -> None:
        (row, start), (end_row, end_col) = node.start_pos, node.end_pos
        row += self.row_offset
        end_row += self.row_offset
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
        header_last = (suites[0][0].start_pos[0] + self.row_offset - 1) if suites else last
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


def _broken_lines(lines: list[str], a: int, b: int, indent: int, outside: list[bool],
                  err: BaseException) -> tuple[ast.Module, list[tuple[Span, str]]] | None:
    """The common case while typing, without parso: each error CPython names sits in one
    statement of simple lines (cut short, a bracket left open or closed by the wrong bracket, a
    stray indent). That statement's lines — from the line that starts it to the line CPython
    names (a bracket never closed) or to the next statement — become one `pass` (a keyword, so
    it can never be read as part of an expression around it) and the text is parsed again; up
    to `MAX_QUICK` such statements. Every other line is the user's, unchanged, and the whole
    text parses. Anything else (None) goes to parso."""
    chunk = lines[a:b]
    starts = outside[a:b]
    errors: list[tuple[Span, str]] = []
    blanked: set[int] = set()
    for _attempt in range(MAX_QUICK):
        msg = getattr(err, "msg", None) or str(err)
        edit = _quick_edit(chunk, starts, blanked, _error_line(err, len(lines)) - a, msg, a, indent)
        if edit is None:
            return None
        errors.append((_span_of(err, lines), msg))
        tree, err = _replaced_and_parsed(chunk, *edit, blanked, a, indent)
        if err is None:
            return (tree, errors) if tree is not None else None
        starts = _line_starts_outside("\n".join(chunk), len(chunk))
    return None


def _quick_edit(chunk: list[str], starts: list[bool], blanked: set[int], k: int, msg: str,
                a: int, indent: int) -> tuple[int, int, str] | None:
    """For CPython's error `msg` at line `k` of a chunk (its first line is line `a` of the file):
    the lines to replace (first, last) and their replacement, or None (parso's case)."""
    if msg.startswith("expected an indented block"):
        # A header whose block is gone (or not indented): ` pass` after its colon, on its
        # own line (every column of the line stays where it was).
        j = next((i for i in range(min(k, len(chunk) - 1), -1, -1) if _is_code(chunk[i])
                  and (i < k or chunk[i].split("#", 1)[0].rstrip().endswith(":"))), None)
        code = chunk[j].split("#", 1)[0].rstrip() if j is not None else ""
        if j is None or j in blanked or not code.endswith(":"):
            return None
        return j, j, code + " pass" + chunk[j][len(code):]
    if not 0 <= k < len(chunk) or k in blanked:
        return None
    first = next((j for j in range(k, -1, -1) if starts[j] and chunk[j].strip()), None)
    if first is None:
        return None
    twice = next((j for j in range(k + (k + 1 < len(chunk)), first, -1)
                  if not starts[j] and j not in blanked and _ARGUMENT_LINE.search(chunk[j])
                  and chunk[j].strip() == chunk[j - 1].strip()), None)
    if twice is not None:
        # A line of a call typed twice (duplicated) at or just above where CPython stumbles:
        # the copy goes alone, and the statement is kept as it was before.
        return twice, twice, ""
    text_k = chunk[k]
    if "was never closed" in msg:
        last = k  # what follows was read as inside the bracket: it starts statements again
    elif first < k and text_k.strip() and text_k.lstrip()[0] not in ")]}" and \
            _indent(text_k) <= _indent(chunk[first]) and not _closes_below(chunk, first):
        # CPython stumbled on a line at the statement's own column, read as inside a bracket
        # the statement above left open (no bracket closes it below): that statement ends
        # above it.
        last = k - 1
    else:  # up to where its brackets close (a stray line inside them goes with it)
        nxt_start = next((j for j in range(k + 1, len(chunk)) if starts[j] and chunk[j].strip()), None)
        last = (nxt_start if nxt_start is not None else len(chunk)) - 1
    text = chunk[first]
    stripped = text.strip()
    col = _indent(text)
    end = _header_end(chunk, first, col, k) \
        if stripped.startswith("@") or _COMPOUND_START.match(stripped) else None
    if end is not None:
        # A header (or its decorators) that does not parse, over one or several lines:
        # up to the line that ends it with a colon and has the block below, it becomes the
        # header of a function nobody calls, whose body is that block (analysed with
        # nothing known, as parso's repair keeps it).
        return (first, end, " " * col + _orphan_header(a + first + 1)) if col >= indent else None
    if stripped.startswith("@") and "was never closed" not in msg:
        return None  # a decorator whose definition was not found: parso's case
    if first and chunk[first - 1].endswith("\\"):
        return None  # the rest of a statement continued with a backslash
    if msg.startswith(("unexpected indent", "unindent does not match")):
        col = _statement_column(chunk, starts, first, indent)  # where the statement above starts
        if col is None:
            return None
    if col < indent:
        return None
    prev = next((j for j in range(first - 1, -1, -1) if chunk[j].strip() and starts[j]), None)
    if prev is not None and chunk[prev].rstrip().endswith(":") and _indent(chunk[prev]) >= col:
        return None  # the first line of a block: its indentation may be what is wrong
    nxt = next((j for j in range(last + 1, len(chunk)) if chunk[j].strip()), None)
    deeper = nxt is not None and _indent(chunk[nxt]) > col
    if deeper and starts[nxt] and first == last:
        # A header that does not parse, with its block below: the block is kept as the
        # body of a function nobody calls (as parso's repair keeps it), analysed with
        # nothing known.
        return first, last, " " * col + _orphan_header(a + first + 1)
    if deeper and not starts[nxt] and not _COMPOUND_START.match(stripped):
        # A simple statement whose bracket was left open (or closed too soon): its
        # continuation lines, deeper than it (and a closing bracket at its column), go too.
        j = last + 1
        while j < len(chunk):
            t = chunk[j]
            if t.strip() and _indent(t) <= col and t.lstrip()[0] not in ")]}":
                break
            j += 1
        return first, j - 1, " " * col + "pass"
    if deeper or chunk[last].rstrip().endswith((":", "\\")):
        return None  # more of this statement below, or a header: parso's case
    return first, last, " " * col + "pass"


def _one_simple_statement(lines: list[str], outside: list[bool], c: int, d: int) -> bool:
    """Are lines [c, d) one simple statement: no header or decorator, every line after the first
    inside its brackets (which close by the last line)?"""
    first = lines[c].lstrip()
    if not first or first.startswith("@") or _COMPOUND_START.match(first):
        return False
    if any(outside[i] and lines[i].strip() and lines[i].lstrip()[0] not in "#)]}" for i in range(c + 1, d)):
        return False
    return _closes_below(lines[c:d], 0)


def _closes_below(chunk: list[str], first: int) -> bool:
    """Do the brackets the statement starting at line `first` opens close within the chunk?"""
    return _line_starts_outside("\n".join(chunk[first:]) + "\n", len(chunk) - first + 1)[-1]


def _replaced_and_parsed(chunk: list[str], first: int, last: int, replacement: str,
                         blanked: set[int], a: int, indent: int
                         ) -> tuple[ast.Module | None, BaseException | None]:
    """Lines `first..last` of the chunk replaced by `replacement` (then blank lines), and the
    chunk parsed again: its tree, or the next syntax error (None, None: give up)."""
    chunk[first] = replacement
    for j in range(first + 1, last + 1):
        chunk[j] = ""
    blanked.update(range(first, last + 1))
    try:
        return ast.parse(_wrap(chunk, a, indent, True), type_comments=False), None
    except (SyntaxError, ValueError) as e:
        return None, _detached(e)
    except (RecursionError, MemoryError):
        return None, None


def _header_end(chunk: list[str], first: int, col: int, k: int) -> int | None:
    """The line that ends a header starting at `first` (at column `col`), at or after the error
    line `k`: it ends with a colon and the next line that is not empty is deeper than `col`.
    Looked for over a bounded number of lines; None if not found."""
    for j in range(max(first, k), min(len(chunk), first + MAX_HEADER_LINES)):
        code = chunk[j].split("#", 1)[0].rstrip()
        if not code.endswith(":"):
            continue
        nxt = next((i for i in range(j + 1, len(chunk)) if chunk[i].strip()), None)
        if nxt is not None and _indent(chunk[nxt]) > col:
            return j
    return None


def _statement_column(chunk: list[str], starts: list[bool], k: int, block: int) -> int | None:
    """The column of the nearest statement above line `k` (None if it opens a block; the block's
    column `block` if there is none: only comments above it in the chunk)."""
    for j in range(k - 1, -1, -1):
        if chunk[j].strip() and starts[j] and not chunk[j].lstrip().startswith("#"):
            if chunk[j].rstrip().endswith(":"):
                return None
            return _indent(chunk[j])
    return block


def _repair(source: str, lines: list[str], first: BaseException,
            file_lines: list[str] | None = None) -> tuple[ast.Module | None, list[tuple[Span, str]]]:
    """One pass of parso over a broken text, its broken statements neutralised, parsed again.
    `lines`: the text's lines (a statement's, padded to its place in the file); `file_lines`:
    the whole file's, where errors are placed (CPython may blame the line after the text)."""
    try:
        blocks = _classify(source, lines)
    except (RecursionError, MemoryError):
        line = _error_line(first, len(lines))
        return None, [(Span(line, 0, line, 0), TOO_DEEP)]
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
    return tree, _errors(first, file_lines or lines, blocks, broken, len(lines))


def _classify(source: str, lines: list[str]) -> _Blocks:
    import parso

    # The padding that keeps the file's line numbers is left out (parso's tokenizer is Python:
    # thousands of empty lines cost it milliseconds); rows are shifted back instead.
    text = source.lstrip("\n")
    module = parso.load_grammar().parse(text, error_recovery=True, cache=False)
    blocks = _Blocks(lines, len(source) - len(text))
    blocks.add_block(module.children, -1, 0)
    _dismantle(module)
    return blocks


def _dismantle(tree: Any) -> None:
    """Cut a parso tree's parent links (the blocks keep only line numbers): its nodes, each in a
    cycle with its parent, are then freed at once rather than by a garbage collection."""
    todo = [tree]
    while todo:
        node = todo.pop()
        children = getattr(node, "children", None)
        if children:
            for child in children:
                child.parent = None
            todo.extend(children)
            node.children = []


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
            out[line] = " " * col + _orphan_header(line + 1)
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
            broken: set[int], end: int) -> list[tuple[Span, str]]:
    """One error per broken region: CPython's own message and position for the first error,
    and for each other region the message CPython gives for that region alone. The regions lie
    in lines [0, end) of the file's `lines`; an error CPython gives at the end of that text is
    blamed on the line after it (where the file goes on), and counts as the last region's."""
    out: list[tuple[Span, str]] = []
    first_span = _past_the_end(first, lines, end) or _span_of(first, lines)
    out.append((first_span, getattr(first, "msg", None) or str(first)))
    for a, b in _runs(blocks, broken):
        if len(out) >= MAX_REPORTED:
            break
        if a <= first_span.line <= b or (first_span.line >= end and b >= end - 1):
            continue
        out.append(_region_error(lines, a, b))
    out.sort(key=lambda e: (e[0].line, e[0].col))
    return out

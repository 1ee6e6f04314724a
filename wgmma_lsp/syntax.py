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
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from wgmma_lsp.spans import Span

MAX_DISAGREEMENTS = 4  # extra parses when CPython rejects a statement parso accepted
MAX_REPORTED = 50  # syntax errors reported per file (all broken regions are neutralised)
MAX_NESTING = 24  # definitions inside definitions whose bodies are repaired one by one
MAX_QUICK = 3  # lines of one statement blanked one by one before parso is asked
GROUP = 8  # statements of a block parsed at once while repairing
# A block whose header is broken is kept as the body of a function of this name (and its line)
# that nobody calls: analysed with nothing known (the driver knows the ones a `main` held).
ORPHAN_PREFIX = "_wgmma_orphan_"
MAX_HEADER_LINES = 40  # lines a broken header (decorators, a long signature) is looked at over

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


TOO_DEEP = "too deeply nested"  # a statement CPython's parser cannot take (RecursionError)


def parse(source: str) -> Parsed:
    """Parse; broken statements are neutralised (blanked, keeping every other line in place).

    On a syntax error the file is cut into its top-level statements (a linear scan that knows
    strings, comments and brackets) and each is parsed on its own. A compound statement (`def`,
    `class`, `if`, `for`, `while`, `with`, `try`) that fails but whose headers parse has each
    block cut and parsed the same way, statement by statement (a signature that does not
    delimit itself finds its block by indentation);
    a statement that still fails is repaired alone: a one-line slip directly, anything else by
    one pass of parso over that statement only. Typing in one function never sends the whole
    file (or the whole function) down the slow path."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return Parsed(ast.parse(source, type_comments=False))
    except (SyntaxError, ValueError) as e:
        first = _detached(e)
    except (RecursionError, MemoryError):  # nested too deeply somewhere: statement by statement,
        first = None  # those CPython cannot take are TOO_DEEP, the others analysed
    lines = source.split("\n")
    outside = _line_starts_outside(source, len(lines))
    body, errors = _block(lines, outside, 0, len(lines), 0, 0, first)
    if not errors:  # the statements parse one by one but not together: say so all the same
        errors.append((_span_of(first, lines), getattr(first, "msg", None) or str(first))
                      if first is not None else (Span(0, 0, 0, 0), TOO_DEEP))
    errors = sorted(dict.fromkeys(errors), key=lambda e: (e[0].line, e[0].col))  # each once
    return Parsed(ast.Module(body=body, type_ignores=[]), errors[:MAX_REPORTED], True)


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


def _block(lines: list[str], outside: list[bool], a: int, b: int, indent: int,
           depth: int, err: BaseException | None = None) -> tuple[list[ast.stmt], _Errors]:
    """The statements of lines [a, b), a block whose statements start at column `indent`.
    Runs of up to `GROUP` statements are parsed at once (`ast.parse` costs as much to start as
    a short statement does to parse); a run that fails is split at the statement CPython names.
    `err`: CPython's error for a text these lines end (or hold) the broken part of, already
    known: the run holding its line is not parsed again to learn it."""
    body: list[ast.stmt] = []
    errors: _Errors = []
    run: list[tuple[int, int]] = []
    line = _blamed_line(err, len(lines)) if err is not None else -1

    def flush() -> None:
        known = err if run and run[0][0] <= line < run[-1][1] else None
        _extend(body, errors, _run(lines, outside, run, indent, depth, known))
        run.clear()

    for c, d in statement_chunks(lines, outside, a, b, indent):
        if _indent(lines[c]) < indent and lines[c].strip():  # dedented too far: alone
            flush()
            _extend(body, errors, _statement(lines, outside, c, d, indent, depth))
            continue
        run.append((c, d))
        if len(run) == GROUP:
            flush()
    flush()
    return body, errors


def _blamed_line(err: BaseException, n_lines: int) -> int:
    """The line of the statement CPython's error says is broken (-1: it does not say): the line
    it names, or for a missing block the header's line (the line it names is the one after)."""
    if _pinned(err):
        return _error_line(err, n_lines)
    no_block = _NO_BLOCK.match(getattr(err, "msg", None) or "")
    return min(int(no_block.group(1)) - 1, n_lines - 1) if no_block is not None else -1


def _pinned(err: BaseException) -> bool:
    """Does CPython's error name a line of the statement that is broken (not the line after it,
    as "expected an indented block" does)? Only then is it taken as that statement's error."""
    msg = getattr(err, "msg", None) or ""
    return "was never closed" in msg or msg.startswith(_PINNED)


_PINNED = ("invalid syntax", "unexpected indent", "unindent does not match", "unmatched",
           "closing parenthesis", "unterminated", "expected ':'", "expected '('",
           # (a token or an expression of the statement itself)
           "invalid character", "invalid decimal literal", "positional argument follows",
           "expression cannot contain assignment", "unexpected character after line continuation",
           "f-string", "did you forget parentheses", "expected 'else' after 'if' expression")


def _extend(body: list[ast.stmt], errors: _Errors, more: tuple[list[ast.stmt], _Errors]) -> None:
    body.extend(more[0])
    errors.extend(more[1])


def _run(lines: list[str], outside: list[bool], chunks: list[tuple[int, int]], indent: int,
         depth: int, err: BaseException | None = None) -> tuple[list[ast.stmt], _Errors]:
    """The statements of consecutive chunks of one block, parsed at once; if that fails, the
    chunk holding CPython's error is repaired alone and the chunks on either side are taken
    the same way (at most `GROUP` chunks: each error costs a bounded number of parses)."""
    if not chunks:
        return [], []
    if len(chunks) == 1:
        return _statement(lines, outside, *chunks[0], indent, depth, err)  # (`err` is pinned)
    a, b = chunks[0][0], chunks[-1][1]
    if err is not None:
        line = _blamed_line(err, len(lines))  # (a known error is always one that names its line)
    else:
        try:
            tree = ast.parse(_wrap(lines[a:b], a, indent, True), type_comments=False)
        except (SyntaxError, ValueError) as e:
            err = _detached(e)
            line = _blamed_line(err, len(lines))
        except (RecursionError, MemoryError):
            line = -1
        else:
            return _body_of(tree, indent), []
    blamed = line >= 0  # CPython says which statement is broken: it is repaired with that error
    if err is not None and not blamed:
        line = _error_line(err, len(lines))
    i = next((n for n, (c, d) in enumerate(chunks) if c <= line < d), None)
    if i is None:  # no chunk to blame: one by one
        body: list[ast.stmt] = []
        errors: _Errors = []
        for c, d in chunks:
            _extend(body, errors, _statement(lines, outside, c, d, indent, depth))
        return body, errors
    body, errors = _run(lines, outside, chunks[:i], indent, depth)
    _extend(body, errors, _statement(lines, outside, *chunks[i], indent, depth, err if blamed else None))
    _extend(body, errors, _run(lines, outside, chunks[i + 1:], indent, depth))
    return body, errors


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


def _statement(lines: list[str], outside: list[bool], c: int, d: int, indent: int,
               depth: int, err: BaseException | None = None) -> tuple[list[ast.stmt], _Errors]:
    """The statements of lines [c, d), one statement of a block at column `indent` (or a broken
    region of it), repaired if they do not parse (`err`: CPython's error for them, if known)."""
    if not any(_is_code(t) for t in lines[c:d]):
        return [], []  # blank lines and comments only
    col = _indent(lines[c])
    shallow = col < indent and bool(lines[c].strip())
    # (a statement dedented too far is parsed at its own column: `if 1:` cannot hold it)
    stmts, errors = _statement_repaired(lines, outside, c, d, col if shallow else indent, depth,
                                        None if shallow else err)
    if shallow:
        # Dedented to a column no enclosing block has: CPython's error for it, and the statement
        # kept in its block.
        errors.insert(0, (Span(c, col, c, len(lines[c].rstrip())),
                          "unindent does not match any outer indentation level"))
    return stmts, errors


def _statement_repaired(lines: list[str], outside: list[bool], c: int, d: int, indent: int,
                        depth: int, known: BaseException | None) -> tuple[list[ast.stmt], _Errors]:
    chunk = lines[c:d]
    if known is not None and c <= _error_line(known, len(lines)) < d:
        err: BaseException = known
        msg = getattr(known, "msg", None) or ""
        if _error_line(known, len(lines)) == c and msg.startswith("invalid syntax") and \
                not _COMPOUND_START.match(lines[c].lstrip()):
            # CPython stumbled on its first line: perhaps read into a bracket the statement
            # above left open. If it parses alone, it is kept (CPython's error stays reported).
            try:
                tree = ast.parse(_wrap(chunk, c, indent, True), type_comments=False)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass
            else:
                return _body_of(tree, indent), [(_span_of(known, lines), msg)]
    else:
        try:
            # Padded with empty lines: CPython numbers the lines as the file does (skipping
            # empty lines costs far less than `ast.increment_lineno`'s walk over every node).
            tree = ast.parse(_wrap(chunk, c, indent, True), type_comments=False)
        except (SyntaxError, ValueError) as e:
            err = _detached(e)
        except (RecursionError, MemoryError):
            return [], [(Span(c, 0, c, len(lines[c])), TOO_DEEP)]
        else:
            return _body_of(tree, indent), []
    if depth < MAX_NESTING:
        nested = _compound(lines, outside, c, d, indent, depth, err)
        if nested is not None:
            return nested
    if depth < MAX_NESTING:
        run = _deeper_run(lines, outside, c, d, indent, depth, err)
        if run is not None:
            return run
    quick = _broken_lines(lines, c, d, indent, outside, err)
    if quick is not None:
        return _body_of(quick[0], indent), quick[1]
    if _one_simple_statement(lines, outside, c, d):
        # Nothing of it could be kept (parso would drop it whole too): it goes, unparsed.
        return [], [(_span_of(err, lines), getattr(err, "msg", None) or str(err))]
    padded_lines = [""] * c + chunk
    if indent:
        padded_lines[c - 1] = "if 1:"
    repaired, errs = _repair(_wrap(chunk, c, indent, True), padded_lines, err, lines)
    # A missing block is blamed on the token after the header, which may lie past the chunk.
    errs = [(_missing_block_span(msg, lines) or span, msg) for span, msg in errs]
    return (_body_of(repaired, indent) if repaired is not None else []), errs


def _compound(lines: list[str], outside: list[bool], c: int, d: int, indent: int, depth: int,
              err: BaseException | None = None) -> tuple[list[ast.stmt], _Errors] | None:
    """A compound statement (`def`, `class`, `if`/`elif`/`else`, `for`, `while`, `with`, `try`,
    with its decorators) whose headers parse: each clause's block is repaired statement by
    statement, so that one broken line costs the repair of that line only. A `def`/`class` whose
    decorators do not parse keeps its header without them; a one-clause statement whose header
    does not parse becomes a function nobody calls, with the block as its body (analysed with
    nothing known). Stray lines above a `def` (`err`: CPython's error in the chunk) are dropped.
    None: not a compound statement this can take apart (the caller goes on)."""
    k = c
    while k < d and lines[k][indent:indent + 1] == "@":  # decorators, possibly over several lines
        k += 1
        while k < d and not outside[k]:
            k += 1
    if k >= d:
        return None
    if not _BLOCK_HEADER.match(lines[k], indent):
        # Stray lines between decorators and their `def` (or above a `def`): they go, the
        # definition below them stays.
        j = next((i for i in range(k + 1, min(d, k + MAX_HEADER_LINES)) if outside[i]
                  and _indent(lines[i]) == indent and _DEF.match(lines[i], indent)), None)
        if j is None and k > c:
            j = k  # decorators of no definition (its `def` line gone): they go, the rest stays
        if j is None or err is None:
            return None
        line = _error_line(err, len(lines))
        # (CPython blames the line after the decorators when no `def` follows them)
        error = (_span_of(err, lines), getattr(err, "msg", None) or str(err)) \
            if c <= line < max(j, k + 1) else _region_error(lines, c, j - 1)
        stmts, errs = _statement(lines, outside, j, d, indent, depth)
        return stmts, [error, *errs]
    decorated = k > c
    if decorated and not _DEF.match(lines[k], indent):
        return None
    is_def = _DEF.match(lines[k], indent) is not None
    starts = [k] + [i for i in range(k + 1, d) if outside[i] and _indent(lines[i]) == indent
                    and _CONTINUATION.match(lines[i], indent)]
    clauses = _clauses(lines, outside, starts, d, indent, is_def)
    if clauses is None:
        if len(starts) != 1 or not is_def:
            return None
        # A signature that does not delimit itself (a bracket left open, a stray line in it):
        # its block is found by indentation alone, and the header becomes an orphan's below.
        found = _block_by_indent(lines, k, d, indent)
        if found is None or found[0] - c > MAX_HEADER_LINES:
            return None
        m, body_indent = found
        # The block ends at a line back at the header's column (read as inside the bracket).
        end = next((i for i in range(m + 1, d) if lines[i].strip() and _indent(lines[i]) <= indent
                    and lines[i].lstrip()[0] not in "#)]}"), d)
        clauses = [(m - 1, m, body_indent, end)]
    end = clauses[-1][3]
    skeleton = lines[c:end]
    for h, m, body_indent, e in clauses:
        for i in range(h + 1, e):
            skeleton[i - c] = ""
        skeleton[m - c] = " " * body_indent + "pass"
    errors: _Errors = []
    node, node_err = _skeleton(skeleton, c, indent)
    if node is None:
        if node_err is None:
            return None
        if decorated:  # the decorators may be what is broken
            for i in range(c, k):
                skeleton[i - c] = ""
            node, _ = _skeleton(skeleton, c, indent)
        if node is None:
            if len(clauses) != 1 or clauses[0][0] - c >= MAX_HEADER_LINES:
                return None
            for i in range(c, clauses[0][0] + 1):
                skeleton[i - c] = ""
            # A block that runs whatever its header says (`try:` without its handler, a `with`
            # half typed) stays where it runs; any other becomes an orphan's body.
            runs = not decorated and _ALWAYS_RUNS.match(lines[k], indent)
            skeleton[k - c] = " " * indent + ("if 1:" if runs else _orphan_header(c + 1))
            node, _ = _skeleton(skeleton, c, indent)
            if node is None:
                return None
        errors.append((_span_of(node_err, lines), getattr(node_err, "msg", None) or str(node_err)))
    m = clauses[0][1]
    if not outside[m]:  # read as inside a header's bracket left open: scanned again from there
        outside[m:d] = _line_starts_outside("\n".join(lines[m:d]), d - m)
    bodies = {m + 1: (h, body_indent, e) for h, m, body_indent, e in clauses}
    for owner in ast.walk(node):
        for field_name in ("body", "orelse", "finalbody"):
            stmts = getattr(owner, field_name, None)
            if not (isinstance(stmts, list) and len(stmts) == 1 and isinstance(stmts[0], ast.Pass)):
                continue
            clause = bodies.get(stmts[0].lineno)
            if clause is None:
                continue
            h, body_indent, e = clause
            inner, errs = _block(lines, outside, h + 1, e, body_indent, depth + 1,
                                 err if node_err is None else None)
            errors.extend(errs)
            if inner:
                setattr(owner, field_name, inner)
            owner.end_lineno = max(getattr(owner, "end_lineno", None) or 0, e)  # type: ignore[attr-defined]
    node.end_lineno = max(node.end_lineno or 0, end)
    if end == d:
        return [node], errors
    rest, errs = _block(lines, outside, end, d, indent, depth)  # statements after the block
    return [node, *rest], errors + errs


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


def _deeper_run(lines: list[str], outside: list[bool], c: int, d: int, indent: int, depth: int,
                err: BaseException) -> tuple[list[ast.stmt], _Errors] | None:
    """A broken statement with lines deeper than its block below it (a `def` line deleted, a
    block pasted a level too deep, a header that does not parse): the statement above them is
    repaired alone, and the run of deeper lines, to the end of the chunk, is a block of its own,
    repaired statement by statement as the body of a function nobody calls (analysed with
    nothing known, as a block whose header broke is)."""
    k = next((i for i in range(c + 1, d) if outside[i] and lines[i].strip()
              and not lines[i].lstrip().startswith("#") and _indent(lines[i]) > indent), None)
    if k is None or lines[k - 1].endswith("\\"):
        return None
    above = next((lines[i] for i in range(k - 1, c - 1, -1) if _is_code(lines[i])), "")
    start = next((lines[i] for i in range(k - 1, c - 1, -1) if outside[i] and _is_code(lines[i])),
                 "")  # where that logical line starts
    if above.split("#", 1)[0].rstrip().endswith(":") and _COMPOUND_START.match(start.lstrip()):
        return None  # a header's own block (the line repair's case)
    col = _indent(lines[k])
    for i in range(k + 1, d):
        t = lines[i]
        if t.strip() and outside[i] and _indent(t) <= indent and t.lstrip()[0] not in "#)]}":
            return None
    try:
        orphan_tree = ast.parse(_wrap([" " * indent + _orphan_header(k + 1), " " * col + "pass"],
                                      k, indent, True), type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    orphan = _body_of(orphan_tree, indent)[0]
    head, errors = _statement(lines, outside, c, k, indent, depth)
    if not errors or errors[-1][0].line != _error_line(err, len(lines)):
        errors.append((_span_of(err, lines), getattr(err, "msg", None) or str(err)))
    body, errs = _block(lines, outside, k, d, col, depth + 1)
    errors.extend(errs)
    if body:
        orphan.body = body  # type: ignore[attr-defined]
    orphan.end_lineno = d
    return [*head, orphan], errors


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


# -- top-level statements -------------------------------------------------------------------

_SCAN = re.compile(r'"""|' + r"'''|#[^\n]*|" + r'"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'|[()\[\]{}]|\n")
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
_DEF = re.compile(r"(?:def|class|async\s+def)\b")
_COMPOUND_START = re.compile(r"(?:def|class|async|if|elif|else|for|while|with|try|except|finally|match|case)\b")
_ALWAYS_RUNS = re.compile(r"(?:try|with|async\s+with)\b")
_BLOCK_HEADER = re.compile(r"(?:def|class|if|for|while|with|try|async\s+(?:def|for|with))\b")
_COMPOUND_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor,
                   ast.While, ast.With, ast.AsyncWith, ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else []))
_INDENTED_DEF = re.compile(r"[ \t]*(?:def|class|async\s+def)\s")
# A compound statement's header at column 0 (`if __name__ == "__main__":`): in code that fails to
# parse, a line like this inside brackets is a bracket left open above it, not a continuation.
_TOP_HEADER = re.compile(r"(?:if|for|while|with|try|async[ \t]+(?:for|with))\b[^\n#]*:[ \t]*(?:#[^\n]*)?$",
                         re.M)
# A line only a statement can start with (a keyword no expression holds, an augmented
# assignment): back at the indentation of the line a bracket was opened on (or further left),
# it is a bracket left open above it, not a continuation.
_STATEMENT_ONLY = re.compile(r"[ \t]*(?:(?:return|assert|raise|del|pass|break|continue|import|global|"
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


_ARGUMENT_LINE = re.compile(r"\w[^#]*,\s*(?:#.*)?$")  # `x, y,` / `f(a), k=1,`: a line of arguments
_ASSIGNMENT = re.compile(r"[ \t]*[\w.]+(?:\[[^\]\n]*\])?(?:[ \t]*,[ \t]*[\w.]+)*[ \t]+=[ \t]+(?!=)")


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


def _past_the_end(err: BaseException, lines: list[str], end: int) -> Span | None:
    """An error CPython gives at the end of a text (lines [0, end) of the file parsed alone: a
    dedent or a decorator with nothing after it), blamed where the file goes on: its next token."""
    line = (getattr(err, "lineno", None) or 0) - 1
    offset = getattr(err, "offset", None)
    if not 0 <= line < end <= len(lines) or offset is None:
        return None
    if getattr(err, "end_offset", None) not in (-1, 0) or \
            offset - 1 < len(lines[line].rstrip()) and offset != 0:
        return None  # on a token of the text
    nxt = _next_code_line(lines, line + 1)
    return _token_span(lines, nxt) if nxt is not None and nxt >= end else None  # (not its last line)


_NO_BLOCK = re.compile(r"expected an indented block after .* on line (\d+)$")


def _missing_block_span(msg: str, lines: list[str]) -> Span | None:
    """For a header whose block is missing, where CPython blames it: the first token after the
    header (a statement parsed on its own ends at its header, so that token is found in the file)."""
    no_block = _NO_BLOCK.match(msg)
    if no_block is None:
        return None
    h = int(no_block.group(1)) - 1
    nxt = _next_code_line(lines, h + 1)
    if not 0 <= h < len(lines) or nxt is None or _indent(lines[nxt]) > _indent(lines[h]):
        return None
    return _token_span(lines, nxt)


def _token_span(lines: list[str], i: int) -> Span:
    """The first character of line `i`'s code."""
    col = _indent(lines[i])
    return Span(i, col, i, col + 1)


def _span_of(err: BaseException, lines: list[str]) -> Span:
    no_block = _missing_block_span(getattr(err, "msg", None) or "", lines)
    if no_block is not None:
        return no_block
    line = _error_line(err, len(lines))
    text = lines[line] if line < len(lines) else ""
    offset = getattr(err, "offset", None)
    col = min(max((offset or 1) - 1, 0), len(text))
    end_line = getattr(err, "end_lineno", None)
    end_offset = getattr(err, "end_offset", None)
    if end_line is not None and end_offset is not None and end_line - 1 == line and end_offset - 1 > col:
        return Span(line, col, line, min(end_offset - 1, len(text)))
    indent = _indent(text)
    return Span(line, min(col, len(text)), line, len(text)) if col < len(text) else Span(line, indent, line, len(text))


def _region_error(lines: list[str], a: int, b: int) -> tuple[Span, str]:
    """CPython's message for a broken region parsed on its own (small: linear in the region)."""
    chunk = lines[a:b + 1]
    indent = min((_indent(s) for s in chunk if s.strip()), default=0)
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
                    col = _indent(ln)
                span = Span(line, col, line, len(ln))
    except (ValueError, RecursionError, MemoryError):
        pass
    else:
        line = lines[a]
        span = Span(a, _indent(line), b, len(lines[b]))
        msg = "invalid syntax here" if not _misindented_message(lines, a) else "unexpected indent"
    return _missing_block_span(msg, lines) or span, msg


def _misindented_message(lines: list[str], a: int) -> bool:
    return bool(lines[a]) and lines[a][0] in " \t"


def warm() -> None:
    """Load parso's grammar ahead of the first broken file (a few hundred milliseconds)."""
    try:
        import parso

        parso.load_grammar()
    except Exception:  # pragma: no cover - parso comes with jedi
        pass

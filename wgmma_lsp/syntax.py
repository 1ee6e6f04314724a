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

from wgmma_lsp.spans import Span
from wgmma_lsp.syntax_repair import _broken_lines, _one_simple_statement, _repair
from wgmma_lsp.syntax_spans import _blamed_line, _missing_block_span, _region_error, _span_of
from wgmma_lsp.syntax_text import (
    _ALWAYS_RUNS,
    _BLOCK_HEADER,
    _COMPOUND_START,
    _CONTINUATION,
    _DEF,
    MAX_HEADER_LINES,
    MAX_REPORTED,
    TOO_DEEP,
    _block_by_indent,
    _body_of,
    _clauses,
    _detached,
    _error_line,
    _Errors,
    _indent,
    _is_code,
    _line_starts_outside,
    _orphan_header,
    _skeleton,
    _wrap,
    statement_chunks,
)

# Limits other modules read here (tests, the driver's orphan blocks).
from wgmma_lsp.syntax_repair import MAX_DISAGREEMENTS  # noqa: E402,F401
from wgmma_lsp.syntax_text import ORPHAN_PREFIX  # noqa: E402,F401

MAX_NESTING = 24  # definitions inside definitions whose bodies are repaired one by one
GROUP = 8  # statements of a block parsed at once while repairing


@dataclass
class Parsed:
    """A parsed file: its tree and the syntax errors repaired."""
    tree: ast.Module
    errors: list[tuple[Span, str]] = field(default_factory=list)
    repaired: bool = False


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


def warm() -> None:
    """Load parso's grammar ahead of the first broken file (a few hundred milliseconds)."""
    try:
        import parso

        parso.load_grammar()
    except Exception:  # pragma: no cover - parso comes with jedi
        pass

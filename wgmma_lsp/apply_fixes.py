"""`wgmma-lsp check --fix` / `--diff`: apply the preferred quick fix of every diagnostic.

The fixes applied are the rules' own (`Rule.fixes`, the quick fixes the editor offers), the
preferred one of each diagnostic: each is applied to the fixture kernels and traced by real JAX
in the test suite (tests/test_fixes_against_jax.py, tests/test_migration_fixtures.py), so an
applied fix removes an error JAX raises. Suppression comments are never inserted.

Fixes are applied in rounds: in each, the non-overlapping preferred fixes of the current
diagnostics (first come, by position, first served); then the file is analysed again, and the
fixes left out (they overlapped) or newly offered get the next round, until none is left or a
round changes nothing (at most `MAX_ROUNDS`). A round whose result no longer parses is undone.
Trace mode never runs between rounds (it runs the user's code); with `--trace` the final check
does.
"""

from __future__ import annotations

import ast
import difflib
import io
import sys
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp.batch import FileResult, check_source
from wgmma_lsp.ide.model import Diagnostic, Fix, Severity, TextEdit
from wgmma_lsp.settings import Settings

MAX_ROUNDS = 8


@dataclass
class Applied:
    """One fix applied: the diagnostic it fixed (as reported in the round it was applied in)."""

    code: str
    message: str
    line: int  # 0-based, in the text of that round
    col: int
    title: str


@dataclass
class FileFixes:
    path: Path
    original: str
    fixed: str
    applied: list[Applied] = field(default_factory=list)
    rounds: int = 0

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def _offsets(source: str) -> list[int]:
    """Start offset of each line, in the line numbering of the analysis (`str.splitlines`)."""
    out = [0]
    for ln in source.splitlines(keepends=True):
        out.append(out[-1] + len(ln))
    return out


def apply_edits(source: str, edits: Sequence[TextEdit]) -> str:
    """The text with the edits applied (they must not overlap); spans are 0-based lines and
    code-point columns, as the analysis reports them."""
    offsets = _offsets(source)

    def offset(line: int, col: int) -> int:
        if line >= len(offsets) - 1:
            return len(source)
        return min(offsets[line] + col, offsets[line + 1])

    out = source
    for e in sorted(edits, key=lambda e: (e.span.line, e.span.col, e.span.end_line, e.span.end_col),
                    reverse=True):
        s, t = offset(e.span.line, e.span.col), offset(e.span.end_line, e.span.end_col)
        out = out[:s] + e.new_text + out[t:]
    return out


def _collide(a: TextEdit, b: TextEdit) -> bool:
    """Two edits that cannot both be applied: overlapping ranges, or insertions at one point
    (their order would be a guess)."""
    sa, ea = (a.span.line, a.span.col), (a.span.end_line, a.span.end_col)
    sb, eb = (b.span.line, b.span.col), (b.span.end_line, b.span.end_col)
    if sa == ea or sb == eb:  # an insertion: collides with a range it falls inside, or another at its point
        return sa <= eb and sb <= ea
    return sa < eb and sb < ea


def preferred(diagnostics: Sequence[Diagnostic]) -> list[tuple[Diagnostic, Fix]]:
    """The preferred fix of each error or warning that has one, in the order of the diagnostics."""
    out = []
    for d in diagnostics:
        if d.severity not in (Severity.ERROR, Severity.WARNING):
            continue
        fix = next((f for f in d.fixes if f.preferred and f.edits), None)
        if fix is not None:
            out.append((d, fix))
    return out


def choose(candidates: Sequence[tuple[Diagnostic, Fix]]) -> list[tuple[Diagnostic, Fix]]:
    """The fixes of one round: each whose edits collide with none chosen before it (the same
    fix offered for two diagnostics is applied once)."""
    chosen: list[tuple[Diagnostic, Fix]] = []
    taken: list[TextEdit] = []
    seen: set[tuple[TextEdit, ...]] = set()
    for d, fix in sorted(candidates, key=lambda p: (p[0].span.line, p[0].span.col, p[0].code)):
        if fix.edits in seen:
            continue
        if any(_collide(e, t) for e in fix.edits for t in taken) or any(
                _collide(a, b) for i, a in enumerate(fix.edits) for b in fix.edits[i + 1:]):
            continue
        seen.add(fix.edits)
        chosen.append((d, fix))
        taken.extend(fix.edits)
    return chosen


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
        return True
    except (SyntaxError, ValueError):
        return False


def fix_source(path: Path, source: str, settings: Settings,
               diagnostics: Sequence[Diagnostic] | None = None,
               check: Callable[[str, str, Settings], list[Diagnostic]] = check_source) -> FileFixes:
    """Apply preferred fixes in rounds until none is left (see the module's doc). `diagnostics`:
    the first round's, when already computed."""
    result = FileFixes(path, source, source)
    seen = {source}
    parsed = _parses(source)
    current = list(diagnostics) if diagnostics is not None else check(str(path), source, settings)
    for _ in range(MAX_ROUNDS):
        chosen = choose(preferred(current))
        if not chosen:
            break
        new = apply_edits(result.fixed, [e for _, fix in chosen for e in fix.edits])
        if new in seen or (parsed and not _parses(new)):
            break  # a cycle, or fixes that together break the syntax: keep the last good text
        seen.add(new)
        result.applied += [Applied(d.code, d.message, d.span.line, d.span.col, fix.title)
                           for d, fix in chosen]
        result.fixed = new
        result.rounds += 1
        current = check(str(path), new, settings)
    return result


def fix_results(results: Sequence[FileResult], settings_for: Callable[[Path], Settings]
                ) -> list[FileFixes]:
    """The fixes for every analysed file of a `check` run (its diagnostics are the first round's)."""
    out = []
    for r in results:
        if r.source is None or not r.analysed or r.crash or not preferred(r.diagnostics):
            continue
        out.append(fix_source(r.path, r.source, settings_for(r.path), r.diagnostics))
    return out


def unified_diff(f: FileFixes) -> str:
    name = str(f.path)
    return "".join(difflib.unified_diff(f.original.splitlines(keepends=True),
                                        f.fixed.splitlines(keepends=True),
                                        fromfile=f"a/{name.lstrip('/')}", tofile=f"b/{name.lstrip('/')}"))


def write(f: FileFixes) -> None:
    """Write the fixed text in the file's own encoding (PEP 263; its line endings are in the text)."""
    data = f.path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig" and not data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8"
    with open(f.path, "w", encoding=encoding, newline="") as out:
        out.write(f.fixed)


def report(fixes: Sequence[FileFixes], wrote: bool) -> str:
    """One line per fix applied, then how many (`Fixed 3 errors in 1 file.`)."""
    lines = []
    for f in fixes:
        for a in f.applied:
            lines.append(f"{f.path}:{a.line + 1}:{a.col + 1}: {a.code} {'fixed' if wrote else 'fixable'}: "
                         f"{a.title}")
    n = sum(len(f.applied) for f in fixes)
    files = sum(bool(f.applied) for f in fixes)
    if n:
        verb = "Fixed" if wrote else "Would fix"
        lines.append(f"{verb} {n} diagnostic{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}.")
    return "\n".join(lines)


def run(results: list[FileResult], settings_for: Callable[[Path], Settings],
        recheck: Callable[[list[Path]], list[FileResult]], diff_only: bool,
        machine: bool = False) -> tuple[list[FileResult], int]:
    """`--fix` (write, then the files checked again: `recheck`) or `--diff` (print the diffs,
    write nothing). Returns the results to report and the number of fixes. With a `machine`
    output format the list of fixes goes to stderr (stdout is the format's)."""
    fixes = fix_results(results, settings_for)
    changed = [f for f in fixes if f.changed]
    if diff_only:
        for f in changed:
            sys.stdout.write(unified_diff(f))
        text = report(changed, wrote=False)
        if text:
            print(text, file=sys.stderr)
        return results, sum(len(f.applied) for f in changed)
    for f in changed:
        write(f)
    text = report(changed, wrote=True)
    if text:
        print(text, file=sys.stderr if machine else sys.stdout)
    again = {r.path: r for r in recheck([f.path for f in changed])} if changed else {}
    return [again.get(r.path, r) for r in results], sum(len(f.applied) for f in changed)

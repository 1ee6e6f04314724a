"""`wgmma-lsp check --fix` and `--diff`: the preferred quick fix of every diagnostic, applied in
rounds until none is left, checked by the analyzer and by real JAX afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path

from jax_oracle import trace_file
from wgmma_lsp import apply_fixes
from wgmma_lsp.cli import main
from wgmma_lsp.ide.model import Diagnostic, Fix, Severity, TextEdit
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

EXAMPLES = Path(__file__).parent.parent / "examples"
SEED = EXAMPLES / "seed_errors.py"


def _code(line: str) -> str:
    """A line without its comment (the seed files' comments say "error:" / "fixed:")."""
    return line.split("#", 1)[0].rstrip()


def _errors(rc_out_err: tuple[int, str, str]) -> list[str]:
    return [ln for ln in rc_out_err[1].splitlines() if ": WG" in ln and " fixed: " not in ln]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_fix_makes_the_seed_file_check_clean_and_jax_trace_it(tmp_path: Path, capsys) -> None:
    f = tmp_path / "seed.py"
    f.write_text(SEED.read_text())
    before = run(["check", "--jobs", "1", str(f)], capsys)
    fixed_codes = sorted(ln.split(": ")[1].split()[0] for ln in _errors(before))
    assert before[0] == 1 and fixed_codes == ["WG001", "WG002", "WG003"]

    rc, out, _ = run(["check", "--fix", "--jobs", "1", str(f)], capsys)
    # What was fixed, one line each, then the fresh check of the fixed file.
    assert sorted(ln.split(": ")[1] for ln in out.splitlines() if " fixed: " in ln) == \
        [f"{c} fixed" for c in fixed_codes]
    assert "Fixed 3 diagnostics in 1 file." in out
    assert (rc, out.splitlines()[-1]) == (0, "All checks passed!")

    # The lines the fixes changed are the lines of examples/seed_fixed.py (comments aside).
    changed = [_code(b) for a, b in zip(SEED.read_text().splitlines(), f.read_text().splitlines())
               if a != b]
    reference = {_code(ln) for ln in (EXAMPLES / "seed_fixed.py").read_text().splitlines()}
    assert len(changed) == 3 and all(c in reference for c in changed), changed

    # Real JAX traces every entry point without the errors it raised before.
    raised_before = {v.message for v in trace_file(SEED) if v.message}
    assert len(raised_before) == 3
    after = trace_file(f)
    assert after and all(v.message is None for v in after), after


def test_diff_prints_the_fixes_and_writes_nothing(tmp_path: Path, capsys) -> None:
    f = tmp_path / "seed.py"
    f.write_text(SEED.read_text())
    rc, out, err = run(["check", "--diff", "--jobs", "1", str(f)], capsys)
    assert rc == 1 and f.read_text() == SEED.read_text()
    assert "Would fix 3 diagnostics in 1 file." in err
    # The diff is a patch: applied, it gives what --fix writes.
    patch = tmp_path / "fix.patch"
    patch.write_text(out)
    subprocess.run(["patch", "-s", str(f), str(patch)], check=True)
    fixed_by_patch = f.read_text()
    f.write_text(SEED.read_text())
    run(["check", "--fix", "--jobs", "1", str(f)], capsys)
    assert f.read_text() == fixed_by_patch


def test_a_clean_file_is_left_alone(tmp_path: Path, capsys) -> None:
    f = tmp_path / "fixed.py"
    f.write_text((EXAMPLES / "seed_fixed.py").read_text())
    assert run(["check", "--diff", str(f)], capsys)[:2] == (0, "")
    rc, out, _ = run(["check", "--fix", str(f)], capsys)
    assert (rc, out.strip()) == (0, "All checks passed!")
    assert f.read_text() == (EXAMPLES / "seed_fixed.py").read_text()


def test_the_store_dtype_fix_is_applied_by_fix(tmp_path: Path, capsys) -> None:
    fixture = Path(__file__).parent / "fixtures" / "errors" / "ref_indexing_and_stores.py"
    f = tmp_path / fixture.name
    f.write_text(fixture.read_text())
    run(["check", "--fix", "--select", "WG057", str(f)], capsys)
    assert "  y_smem[...] = acc.astype(y_smem.dtype)" in map(_code, f.read_text().splitlines())
    assert all(v.message is None or "Invalid dtype for `swap`" not in v.message for v in trace_file(f))


# --- rounds ------------------------------------------------------------------------------------

def _diag(line: int, col: int, end: int, new: str, code: str = "WG001") -> Diagnostic:
    span = Span(line, col, line, end)
    return Diagnostic(code, "x", f"bad {col}", span, Severity.ERROR,
                      fixes=[Fix("other", (TextEdit(span, "nope"),)),
                             Fix(f"replace with {new}", (TextEdit(span, new),), preferred=True)])


def test_overlapping_fixes_wait_for_the_next_round() -> None:
    """Two fixes of one span: the first is applied, the file is analysed again, and the second
    (still offered by the new analysis) is applied in the next round."""
    source = "a = old\n"

    def check(path: str, text: str, settings: Settings) -> list[Diagnostic]:
        line = text.splitlines()[0]
        out = []
        if line.startswith("a"):  # the whole line: it covers the word below
            out.append(_diag(0, 0, len(line), "b" + line[1:]))
        if "old" in line:
            i = line.index("old")
            out.append(_diag(0, i, i + 3, "new"))
        return out

    result = apply_fixes.fix_source(Path("f.py"), source, Settings(), check=check)
    assert result.rounds == 2
    assert [a.title for a in result.applied] == ["replace with b = old", "replace with new"]
    assert result.fixed == "b = new\n"


def test_rounds_stop_at_a_cycle_and_never_break_the_syntax() -> None:
    flip = {"a = 1\n": "a = 2\n", "a = 2\n": "a = 1\n"}

    def cycling(path: str, text: str, settings: Settings) -> list[Diagnostic]:
        return [_diag(0, 0, 5, flip[text][:5])]

    result = apply_fixes.fix_source(Path("f.py"), "a = 1\n", Settings(), check=cycling)
    assert result.rounds == 1 and result.fixed == "a = 2\n"

    def breaking(path: str, text: str, settings: Settings) -> list[Diagnostic]:
        return [_diag(0, 0, 5, "a = (")]

    assert apply_fixes.fix_source(Path("f.py"), "a = 1\n", Settings(), check=breaking).fixed == "a = 1\n"


def test_insertions_at_one_point_collide_but_neighbours_do_not() -> None:
    at = TextEdit(Span(0, 4, 0, 4), "x")
    assert apply_fixes._collide(at, TextEdit(Span(0, 4, 0, 4), "y"))
    assert apply_fixes._collide(at, TextEdit(Span(0, 2, 0, 6), "y"))
    assert not apply_fixes._collide(TextEdit(Span(0, 0, 0, 4), "a"), TextEdit(Span(0, 4, 0, 8), "b"))
    assert apply_fixes.apply_edits("abcdefgh\n", [TextEdit(Span(0, 0, 0, 4), "A"),
                                                  TextEdit(Span(0, 4, 0, 8), "B")]) == "AB\n"


def test_fix_keeps_a_machine_format_on_stdout(tmp_path: Path, capsys) -> None:
    import json

    f = tmp_path / "seed.py"
    f.write_text(SEED.read_text())
    rc, out, err = run(["check", "--fix", "--format", "json", "--jobs", "1", str(f)], capsys)
    assert (rc, json.loads(out)) == (0, [])
    assert "Fixed 3 diagnostics in 1 file." in err

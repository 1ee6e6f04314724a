"""`# wgmma-lsp: ignore[…]` comments: what they silence, in the IDE layer and the CLI, the quick
fix that adds one, and WG902 for those that silence nothing."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.analysis import analyze
from wgmma_lsp.cli import main
from wgmma_lsp.ide.code_actions import code_actions
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.ide.suppressions import parse
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

BAD = (Path(__file__).parent.parent / "examples" / "seed_errors.py").read_text()
LINE_WG001, LINE_WG002, LINE_WG003 = 22, 34, 42  # 0-based
CODE_LINE = 13  # `TILE_M, TILE_N, TILE_K = ...`: code, no finding


def with_comment(line: int, comment: str, source: str = BAD) -> str:
    lines = source.splitlines()
    lines[line] = lines[line] + "  " + comment
    return "\n".join(lines) + "\n"


def diags(source: str, settings: Settings | None = None) -> list:
    return diagnostics(analyze(source, "k.py"), settings)


def test_parse() -> None:
    src = ("x = 1  # wgmma-lsp: ignore[WG001, WG002]\n"
           "s = '# wgmma-lsp: ignore'\n"  # in a string: not a comment
           "y = 2  # noqa: E501  # wgmma-lsp: ignore\n")
    sups = parse(src)
    assert sorted(sups) == [0, 2]
    assert sups[0].codes == ("WG001", "WG002") and sups[2].codes is None
    assert src.splitlines()[0][sups[0].span.col:sups[0].span.end_col] == "# wgmma-lsp: ignore[WG001, WG002]"


def test_code_suppression_silences_that_code_only() -> None:
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG001]")
    assert [d.code for d in diags(src)] == ["WG002", "WG003"]
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG002]")  # wrong code: still reported
    got = diags(src)
    assert [d.code for d in got] == ["WG001", "WG902", "WG002", "WG003"]
    unused = got[1]
    assert unused.severity == Severity.WARNING and unused.span.line == LINE_WG001
    assert unused.message == "Unused suppression: nothing to silence for WG002 on this line"


def test_bare_suppression_silences_everything_on_its_line() -> None:
    src = with_comment(LINE_WG002, "# wgmma-lsp: ignore")
    assert [d.code for d in diags(src)] == ["WG001", "WG003"]


def test_unused_and_unknown_suppressions() -> None:
    src = with_comment(CODE_LINE, "# wgmma-lsp: ignore")
    src = with_comment(LINE_WG003, "# wgmma-lsp: ignore[WG003, WG999]", src)
    got = [(d.span.line, d.code, d.message) for d in diags(src)]
    assert (CODE_LINE, "WG902", "Unused suppression: `# wgmma-lsp: ignore` silences nothing on this line") in got
    assert (LINE_WG003, "WG902", "Unused suppression: unknown rule code WG999") in got
    assert not any(line == LINE_WG003 and code == "WG003" for line, code, _ in got)


def test_switched_off_rules_are_not_unused() -> None:
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG001, WG002]")
    settings = Settings(ignore=["WG002"])
    assert [d.code for d in diags(src, settings)] == ["WG003"]
    assert [d.code for d in diags(src, Settings(ignore=["WG902"]))] == ["WG002", "WG003"]


def test_unused_suppression_fix_removes_it() -> None:
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG001, WG005]")
    (unused,) = [d for d in diags(src) if d.code == "WG902"]
    (edit,) = unused.fixes[0].edits
    line = src.splitlines()[LINE_WG001]
    fixed = line[:edit.span.col] + edit.new_text + line[edit.span.end_col:]
    assert fixed.endswith("  # wgmma-lsp: ignore[WG001]")
    src = with_comment(CODE_LINE, "# wgmma-lsp: ignore")
    (unused,) = [d for d in diags(src) if d.code == "WG902"]
    (edit,) = unused.fixes[0].edits
    line = src.splitlines()[CODE_LINE]
    assert (line[:edit.span.col] + edit.new_text + line[edit.span.end_col:]) == BAD.splitlines()[CODE_LINE]


def test_quick_fix_adds_a_suppression() -> None:
    analysis = analyze(BAD, "k.py")
    actions = code_actions(analysis, Settings(), Span(LINE_WG001, 0, LINE_WG001, 0))
    titles = [fix.title for _, fix in actions]
    assert titles[-1] == "Suppress WG001 on this line"
    fix = actions[-1][1]
    (edit,) = fix.edits
    lines = BAD.splitlines()
    lines[LINE_WG001] = lines[LINE_WG001][:edit.span.col] + edit.new_text + lines[LINE_WG001][edit.span.end_col:]
    fixed = "\n".join(lines) + "\n"
    assert lines[LINE_WG001].endswith("  # wgmma-lsp: ignore[WG001]")
    assert [d.code for d in diags(fixed)] == ["WG002", "WG003"]  # and it works
    # on a line that already has a suppression, the code is added to it
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG005]")
    actions = code_actions(analyze(src, "k.py"), Settings(), Span(LINE_WG001, 0, LINE_WG001, 0))
    (edit,) = [fix for d, fix in actions if fix.title == "Suppress WG001 on this line"][0].edits
    assert edit.new_text == "# wgmma-lsp: ignore[WG005, WG001]"


def test_cli_honours_suppressions(tmp_path: Path, capsys) -> None:
    f = tmp_path / "k.py"
    src = with_comment(LINE_WG001, "# wgmma-lsp: ignore[WG001]")
    src = with_comment(LINE_WG002, "# wgmma-lsp: ignore", src)
    src = with_comment(LINE_WG003, "# wgmma-lsp: ignore[WG003]", src)
    f.write_text(src)
    assert main(["check", str(f)]) == 0
    assert capsys.readouterr().out.strip() == "All checks passed!"
    f.write_text(with_comment(CODE_LINE, "# wgmma-lsp: ignore", src))
    assert main(["check", str(f)]) == 0  # an unused suppression is a warning
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{f}:{CODE_LINE + 1}:{len(BAD.splitlines()[CODE_LINE]) + 3}: WG902 [warning] Unused suppression: `# wgmma-lsp: ignore` silences nothing on this line"
    assert out[-1] == "Found 1 warning in 1 file."

"""`wgmma-lsp explain CODE`: the rule's documentation rendered for a terminal, or raw Markdown."""

from __future__ import annotations

import io
import re

import pytest

from wgmma_lsp.cli import main
from wgmma_lsp.explain_render import render, use_colour
from wgmma_lsp.rules.registry import RULES, find_rule

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _code_blocks(markdown: str) -> list[list[str]]:
    blocks, current = [], None
    for line in markdown.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def test_explain_prints_no_markdown_syntax(capsys) -> None:
    assert main(["explain", "WG001"]) == 0
    out = capsys.readouterr().out
    assert "**" not in out and "```" not in out and not ANSI.search(out)
    assert not any(line.startswith("#") for line in out.splitlines())
    lines = out.splitlines()
    # The title and each section heading stand on their own line, underlined.
    assert lines[:2] == ["WG001 accumulator-dtype", "=" * len("WG001 accumulator-dtype")]
    i = lines.index("How to fix it")
    assert lines[i + 1] == "-" * len("How to fix it")
    # Code blocks keep their text, indented by four spaces.
    for block in _code_blocks(find_rule("WG001").doc):
        for code in block:
            if code.strip():
                assert f"    {code}" in lines


def test_explain_format_markdown_is_the_raw_doc(capsys) -> None:
    assert main(["explain", "WG001", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == find_rule("WG001").doc + "\n"


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_rule_doc_renders_without_markdown_markers(code: str) -> None:
    doc = find_rule(code).doc
    rendered = render(doc)
    prose = [ln for ln in rendered.splitlines() if not ln.startswith("    ")]  # code blocks aside
    spans = re.findall(r"`+([^`]+)`+", doc)  # what the doc shows as code may hold anything
    for line in prose:
        for s in sorted(spans, key=len, reverse=True):
            line = line.replace(s.strip(), "")
        assert "**" not in line and "```" not in line and not line.startswith("#"), (code, line)


def test_inline_markup() -> None:
    assert render("A **bold** and *soft* word, `code_with_*stars*`, [the docs](https://x.org/a) "
                  "and [a rule](other.md).") == \
        "A bold and soft word, code_with_*stars*, the docs (https://x.org/a) and a rule."
    # Identifiers keep their underscores; a code span may span two lines of a paragraph.
    assert render("__main__ and `a\nb`") == "__main__ and a\nb"


def test_colour_only_on_a_terminal_without_no_color() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert use_colour(Tty(), {"TERM": "xterm"})
    assert not use_colour(Tty(), {"TERM": "xterm", "NO_COLOR": ""})
    assert not use_colour(Tty(), {"TERM": "dumb"})
    assert not use_colour(io.StringIO(), {"TERM": "xterm"})
    coloured = render("# Title\n\nSome `code`.", colour=True)
    assert "\x1b[1mTitle\x1b[0m" in coloured and "\x1b[36mcode\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == "Title\n\nSome code."

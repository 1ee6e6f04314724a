"""`wgmma-lsp explain CODE` for a terminal: a rule's Markdown documentation without its syntax.

Headings become lines of their own (underlined with `=`/`-`, bold on a colour terminal), fenced
code blocks are indented by four spaces without their fences, `**bold**`, `*emphasis*` and
`` `code` `` lose their markers, links show their text (and their address when it is one).
Colour (ANSI) only when asked: `use_colour` says yes for a terminal with `NO_COLOR` unset
(https://no-color.org) and a `TERM` other than `dumb`. `--format markdown` prints the raw text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TextIO

_BOLD, _DIM, _CODE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[0m"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)([\s\S]+?)(?<!`)\1(?!`)")  # may span lines of a paragraph
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def use_colour(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if "NO_COLOR" in env or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _inline(text: str, colour: bool) -> str:
    """One line of prose: code spans kept verbatim (no other marker is read inside them)."""
    parts: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        parts.append(_prose(text[pos:m.start()], colour))
        code = m.group(2)
        if len(m.group(1)) > 1:  # ``a `b` c``: the delimiters' padding spaces go
            code = code.strip()
        parts.append(f"{_CODE}{code}{_RESET}" if colour else code)
        pos = m.end()
    parts.append(_prose(text[pos:], colour))
    return "".join(parts)


def _prose(text: str, colour: bool) -> str:
    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        return f"{label} ({target})" if re.match(r"https?://", target) else label

    text = _LINK.sub(link, text)
    text = _STRONG.sub(lambda m: f"{_BOLD}{m.group(1)}{_RESET}" if colour else m.group(1), text)
    return _EMPHASIS.sub(lambda m: f"{_BOLD}{m.group(1)}{_RESET}" if colour else m.group(1), text)


def render(markdown: str, colour: bool = False) -> str:
    out: list[str] = []
    paragraph: list[str] = []  # prose lines: inline markup may span them

    def flush() -> None:
        if paragraph:
            out.extend(_inline("\n".join(paragraph), colour).split("\n"))
            paragraph.clear()

    in_code = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code:
            code = f"    {line}" if line.strip() else ""
            out.append(f"{_DIM}{code}{_RESET}" if colour and code else code)
            continue
        h = _HEADING.match(line)
        if h:
            flush()
            title = _inline(h.group(2), False)
            if out and out[-1] != "":
                out.append("")
            if colour:
                out.append(f"{_BOLD}{title}{_RESET}")
            else:
                out.append(title)
                out.append(("=" if len(h.group(1)) == 1 else "-") * len(title))
            continue
        if not line.strip():
            flush()
            out.append("")
            continue
        paragraph.append(line)
    flush()
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out)

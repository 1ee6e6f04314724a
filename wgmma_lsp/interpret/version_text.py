"""JAX version strings and the names of Mosaic GPU's lowering semantics: plain values, a leaf."""

from __future__ import annotations

import re

LANE, WARPGROUP = "lane", "warpgroup"

Version = tuple[int, int, int]


def parse(text: str) -> Version | None:
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None

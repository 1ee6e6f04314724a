"""While a newer analysis of a big document runs, hovers are answered from the last finished
one (as pyright does), marked as such, and only on lines whose text is the same in both versions."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from raw_lsp import RawClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import synthetic  # noqa: E402

from wgmma_lsp.finished import STALE_NOTE  # noqa: E402

BIG = synthetic.generate(40_000)
LINES = BIG.splitlines()
URI = "file:///tmp/wgmma_stale_big.py"
EDITED = len(LINES) // 2


def published(client: RawClient, version: int) -> bool:
    return any(p.get("version") == version for p in client.diagnostics(URI))


def first_hover(client: RawClient, candidates: range) -> tuple[int, int, str]:
    for line in candidates:
        if "acc_ref" in LINES[line]:
            col = LINES[line].index("acc_ref")
            value = client.hover(URI, line, col)
            if value:
                return line, col, value
    raise AssertionError("no hover found")


def test_hovers_during_a_newer_analysis_come_from_the_last_finished_one() -> None:
    client = RawClient()
    try:
        client.initialize()
        client.open(URI, BIG)
        deadline = time.monotonic() + 120
        while not published(client, 1) and time.monotonic() < deadline:
            client.drain(0.5)
        assert published(client, 1)
        above, above_col, above_value = first_hover(client, range(0, 400))
        below, below_col, below_value = first_hover(client, range(EDITED + 100, len(LINES)))
        assert STALE_NOTE not in above_value
        for version in range(2, 12):  # a flood of edits: each supersedes the last
            edited = [*LINES[:EDITED], f"x = {version}  # a line typed in the middle", *LINES[EDITED:]]
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": URI, "version": version},
                "contentChanges": [{"text": "\n".join(edited) + "\n"}]})
        stale_above = client.hover(URI, above, above_col)
        stale_below = client.hover(URI, below + 1, below_col)  # the line moved down by one
        on_the_new_line = client.hover(URI, EDITED, 0)
        assert not published(client, 11), "the hovers were answered before the new analysis"
        assert stale_above == f"{above_value}\n\n{STALE_NOTE}"
        assert stale_below == f"{below_value}\n\n{STALE_NOTE}"
        assert on_the_new_line is None  # not in the earlier version: nothing, not something wrong
        while not published(client, 11) and time.monotonic() < deadline:
            client.drain(0.5)
        assert client.hover(URI, above, above_col) == above_value  # fresh again, unmarked
        assert client.close() == 0
    finally:
        client.kill()

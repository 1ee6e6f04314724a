"""Document state over a raw stdio client: reused versions, double opens, unopened documents,
out-of-range edits, and a burst of changes (one diagnostics notification, for the final version)."""

from __future__ import annotations

import pytest

from raw_lsp import EXAMPLE, RawClient

TEXT = EXAMPLE.read_text()
LINES = TEXT.splitlines()
WG001_LINE = next(i for i, ln in enumerate(LINES) if "acc_ref[...] = half" in ln)
FIXED_LINE = LINES[WG001_LINE].replace("acc_ref[...] = half", "acc_ref[...] = half.astype(jnp.float32)")


@pytest.fixture
def client():
    c = RawClient()
    c.initialize()
    yield c
    assert c.close() == 0
    assert "Error in server" not in c.stderr()


def codes(params: dict) -> list[str]:
    return sorted(d["code"] for d in params["diagnostics"])


def whole_line(line: int, text: str) -> dict:
    return {"range": {"start": {"line": line, "character": 0},
                      "end": {"line": line, "character": len(LINES[line])}}, "text": text}


def change(c: RawClient, uri: str, version: int, *changes: dict) -> None:
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                        "contentChanges": list(changes)})


def pull_codes(c: RawClient, uri: str) -> list[str]:
    """The diagnostics of the server's current text, by way of a hover round trip and the
    latest push."""
    c.hover(uri, 0, 0)
    c.drain(1.0)
    return codes(c.diagnostics(uri)[-1])


def test_a_reused_version_is_analysed_again(client: RawClient) -> None:
    uri = "file:///tmp/wgmma_reused.py"
    client.open(uri, TEXT, version=1)
    client.drain(0)
    assert "WG001" in pull_codes(client, uri)
    change(client, uri, 1, whole_line(WG001_LINE, FIXED_LINE))  # the same version number
    assert "WG001" not in pull_codes(client, uri)


def test_a_second_open_replaces_the_text(client: RawClient) -> None:
    uri = "file:///tmp/wgmma_reopened.py"
    client.open(uri, TEXT, version=1)
    assert "WG001" in pull_codes(client, uri)
    fixed = "\n".join(FIXED_LINE if i == WG001_LINE else ln for i, ln in enumerate(LINES)) + "\n"
    client.open(uri, fixed, version=1)  # no didClose in between
    assert "WG001" not in pull_codes(client, uri)
    line = next(i for i, ln in enumerate(fixed.splitlines()) if "half.astype(jnp.float32)" in ln)
    value = client.hover(uri, line, fixed.splitlines()[line].index("half"))
    assert value is not None and "bfloat16" in value


def test_change_for_an_unopened_document_is_logged_not_shown(client: RawClient) -> None:
    change(client, "file:///tmp/wgmma_never_opened.py", 3, {"text": "x = 1\n"})
    client.notify("textDocument/didClose", {"textDocument": {"uri": "file:///tmp/wgmma_never_opened.py"}})
    uri = "file:///tmp/wgmma_after.py"
    client.open(uri, TEXT)
    assert "WG001" in pull_codes(client, uri)
    assert not [n for n in client.notifications if n["method"] == "window/showMessage"]
    assert "not open" in client.stderr()


def test_out_of_range_edits_are_clamped_not_dropped(client: RawClient) -> None:
    uri = "file:///tmp/wgmma_ranges.py"
    client.open(uri, TEXT)
    # a character past the end of a line means the end of that line (the specification's rule)
    change(client, uri, 2, {"range": {"start": {"line": WG001_LINE, "character": 0},
                                      "end": {"line": WG001_LINE, "character": 999}}, "text": FIXED_LINE})
    # a position past the end of the document means its end: the kernel is appended
    kernel_start = next(i for i, ln in enumerate(LINES) if ln.startswith("def scaled_matmul_kernel"))
    kernel = "\n".join(LINES[kernel_start:WG001_LINE + 4]).replace("scaled_matmul_kernel", "again_kernel")
    change(client, uri, 3, {"range": {"start": {"line": len(LINES) + 50, "character": 3},
                                      "end": {"line": len(LINES) + 60, "character": 0}},
                            "text": "\n\n" + kernel + "\n"})
    client.hover(uri, 0, 0)
    client.drain(1.0)
    diags = client.diagnostics(uri)[-1]["diagnostics"]
    wg001 = [d["range"]["start"]["line"] for d in diags if d["code"] == "WG001"]
    n_lines = len(TEXT.splitlines())
    assert wg001 == [n_lines + 2 + (WG001_LINE - kernel_start)]  # only the appended copy's
    assert {"WG002", "WG003"} <= {d["code"] for d in diags}
    assert "past the end of the document" in client.stderr()


def test_apply_change_clamps() -> None:
    from lsprotocol import types as lsp
    from pygls.workspace import TextDocument

    from wgmma_lsp.documents import apply_change

    def edit(text: str, a: tuple[int, int], b: tuple[int, int], new: str) -> str:
        doc = TextDocument("file:///t.py", text)
        apply_change(doc, lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(*a), lsp.Position(*b)), text=new))
        return doc.source

    assert edit("ab\ncd\n", (0, 9), (0, 9), "X") == "abX\ncd\n"
    assert edit("ab\ncd\n", (0, 1), (0, 99), "X") == "aX\ncd\n"
    assert edit("ab\ncd\n", (7, 0), (8, 0), "X") == "ab\ncd\nX"
    assert edit("ab\ncd", (1, 5), (4, 0), "X") == "ab\ncdX"
    assert edit("ab\ncd\n", (1, 2), (1, 0), "X") == "ab\nX\n"
    assert edit("a\U0001F600b\n", (0, 3), (0, 4), "X") == "a\U0001F600X\n"  # UTF-16 units


def test_a_burst_of_changes_publishes_once_for_the_final_version(client: RawClient) -> None:
    uri = "file:///tmp/wgmma_burst.py"
    client.open(uri, TEXT, version=1)
    client.drain(0)
    client.hover(uri, 0, 0)
    client.drain(1.0)
    before = len(client.diagnostics(uri))
    assert before == 1
    text = TEXT
    for v in range(2, 202):
        text = text + f"# edit {v}\n"
        change(client, uri, v, {"text": text})
    client.hover(uri, 0, 0)  # answered for the final version
    client.drain(2.0)
    pushed = client.diagnostics(uri)[before:]
    assert [p["version"] for p in pushed] == [201]
    assert "WG001" in codes(pushed[0])


def test_an_unreadable_change_drops_the_document_until_its_full_text(client: RawClient) -> None:
    uri = "file:///tmp/wgmma_negative.py"
    client.open(uri, TEXT)
    assert "WG001" in pull_codes(client, uri)
    change(client, uri, 2, {"range": {"start": {"line": -1, "character": 0},
                                      "end": {"line": 0, "character": 0}}, "text": "x"})
    assert client.hover(uri, WG001_LINE, 6) is None  # no answer from a copy that drifted
    client.drain(1.0)
    assert client.diagnostics(uri)[-1]["diagnostics"] == []  # its squiggles are cleared
    change(client, uri, 3, {"text": TEXT})  # the editor sends the full text: in sync again
    assert "WG001" in pull_codes(client, uri)
    assert "out of sync" in client.stderr()


@pytest.mark.parametrize("enabled", [False, True])
def test_syntax_errors_are_published_only_when_asked(enabled: bool) -> None:
    c = RawClient()
    try:
        c.initialize({"wgmmaLsp": {"syntaxErrors": enabled}})
        uri = "file:///tmp/wgmma_syntax_setting.py"
        broken_line = next(i for i, ln in enumerate(LINES) if "half = acc_ref" in ln)
        text = "\n".join(ln + " +" if i == broken_line else ln for i, ln in enumerate(LINES)) + "\n"
        c.open(uri, text)
        c.hover(uri, 0, 0)
        c.drain(1.0)
        diags = c.diagnostics(uri)[-1]["diagnostics"]
        wg900 = [d for d in diags if d["code"] == "WG900"]
        assert {"WG002", "WG003"} <= {d["code"] for d in diags}  # the rest is still analysed
        if enabled:
            assert [d["range"]["start"]["line"] for d in wg900] == [broken_line]
        else:
            assert wg900 == []
    finally:
        assert c.close() == 0

"""The real server over stdio: the hover on a Pallas API call and `textDocument/signatureHelp`
while the call is typed show the installed JAX's signature and docstring with the constraints
the rules check — also on a half-typed line, from the last finished analysis."""

from __future__ import annotations

import time

from raw_lsp import RawClient
from test_api_docs import SOURCE

from wgmma_lsp.ide import api_docs

URI = "file:///tmp/wgmma_signature_help.py"
LINES = SOURCE.splitlines()
WGMMA = LINES.index("    plgpu.wgmma(acc_ref, a_ref, b_ref)")


def published(client: RawClient, version: int) -> bool:
    return any(p.get("version") == version for p in client.diagnostics(URI))


def signature_help(client: RawClient, line: int, character: int) -> dict | None:
    return client.request("textDocument/signatureHelp", {
        "textDocument": {"uri": URI}, "position": {"line": line, "character": character},
        "context": {"triggerKind": 2, "triggerCharacter": ",", "isRetrigger": False}})["result"]


def start() -> tuple[RawClient, dict]:
    client = RawClient()
    capabilities = client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    client.notify("initialized", {})
    client.open(URI, SOURCE)
    deadline = time.monotonic() + 120
    while not published(client, 1) and time.monotonic() < deadline:
        client.drain(0.2)
    assert published(client, 1)
    return client, capabilities["result"]["capabilities"]


def test_hover_and_signature_help_on_a_wgmma_call_and_while_typing_one() -> None:
    wgmma, run_scoped = api_docs.api_doc("plgpu.wgmma"), api_docs.api_doc("pl.run_scoped")
    assert wgmma is not None and run_scoped is not None and wgmma.summary is not None
    client, capabilities = start()
    try:
        assert set(capabilities["signatureHelpProvider"]["triggerCharacters"]) == {"(", ","}
        diagnostics = [d for p in client.diagnostics(URI) if p.get("version") == 1 for d in p["diagnostics"]]
        in_call = {d["code"] for d in diagnostics if d["range"]["start"]["line"] == WGMMA}
        assert in_call  # the accumulator in SMEM

        text = client.hover(URI, WGMMA, LINES[WGMMA].index("wgmma") + 2)
        assert text is not None
        assert wgmma.label()[0] in text and wgmma.summary in text
        assert "**Here:**" in text and "`acc`: `Ref<smem>{float32[64,128]}`" in text
        for code in in_call:
            assert f"✗ {code} " in text

        # Inside the complete call, after its second comma: the third parameter, with the values.
        help_ = signature_help(client, WGMMA, LINES[WGMMA].index("b_ref"))
        assert help_ is not None
        (sig,) = help_["signatures"]
        assert sig["label"] == wgmma.label()[0] and help_["activeParameter"] == 2
        a, b = sig["parameters"][2]["label"]
        assert sig["label"][a:b] == "b"
        assert "**Here:**" in sig["documentation"]["value"] and wgmma.summary in sig["documentation"]["value"]

        # A half-typed call on a new line, asked at once: answered from the last finished analysis.
        typed = "    pl.run_scoped(body, collective_axes="
        edited = [*LINES[:WGMMA + 1], typed, *LINES[WGMMA + 1:]]
        client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 2},
                                                 "contentChanges": [{"text": "\n".join(edited) + "\n"}]})
        help_ = signature_help(client, WGMMA + 1, len(typed))
        assert help_ is not None
        (sig,) = help_["signatures"]
        assert sig["label"] == run_scoped.label()[0]
        names = [p.name for p in run_scoped.params]
        assert help_["activeParameter"] == names.index("collective_axes")
        assert run_scoped.summary is not None and run_scoped.summary in sig["documentation"]["value"]
        assert "**Here:**" not in sig["documentation"]["value"]  # the values are of the earlier text

        typed = "    plgpu.wgmma(acc_ref, "
        edited = [*LINES[:WGMMA + 1], typed, *LINES[WGMMA + 1:]]
        client.notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": 3},
                                                 "contentChanges": [{"text": "\n".join(edited) + "\n"}]})
        help_ = signature_help(client, WGMMA + 1, len(typed))
        assert help_ is not None and help_["activeParameter"] == 1
        assert signature_help(client, WGMMA + 1, 4) is None  # before the call: nothing
        deadline = time.monotonic() + 60
        while not published(client, 3) and time.monotonic() < deadline:  # exit with none running
            client.drain(0.2)
    finally:
        code = client.close()
        assert code == 0, client.stderr()[-3000:]

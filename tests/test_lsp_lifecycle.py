"""The lifecycle rules of the LSP specification, over a raw stdio client: what the server answers
before `initialize`, after `shutdown`, for `exit` with and without `shutdown`, and for methods
it does not have."""

from __future__ import annotations

import pytest

from raw_lsp import EXAMPLE, RawClient

URI = "file:///tmp/wgmma_lifecycle_kernel.py"
TEXT = EXAMPLE.read_text()
LINE = next(i for i, ln in enumerate(TEXT.splitlines()) if "error: acc_ref is not a WGMMA" in ln)
COL = TEXT.splitlines()[LINE].index("acc_ref")

INITIALIZE = {"processId": None, "rootUri": None, "capabilities": {}}
HOVER = {"textDocument": {"uri": URI}, "position": {"line": LINE, "character": COL}}


@pytest.fixture
def client():
    c = RawClient()
    yield c
    c.kill()
    for stream in (c.proc.stdin, c.proc.stdout):
        if stream is not None:
            stream.close()


def test_requests_before_initialize_get_server_not_initialized(client: RawClient) -> None:
    assert client.request("textDocument/hover", HOVER)["error"]["code"] == -32002
    assert client.request("shutdown", None)["error"]["code"] == -32002
    client.open(URI, TEXT)  # a notification before initialize is dropped
    client.initialize()
    assert client.hover(URI, LINE, COL) is None  # the document was never opened
    client.open(URI, TEXT)
    assert "Ref<smem>" in (client.hover(URI, LINE, COL) or "")
    assert client.close() == 0


def test_requests_after_shutdown_get_invalid_request(client: RawClient) -> None:
    client.initialize()
    client.open(URI, TEXT)
    assert client.request("shutdown", None)["result"] is None
    assert client.request("textDocument/hover", HOVER)["error"]["code"] == -32600
    assert client.request("shutdown", None)["error"]["code"] == -32600
    assert client.request("no/suchMethod", {})["error"]["code"] == -32600
    client.notify("exit", {})
    assert client.proc.wait(timeout=20) == 0


def test_exit_without_shutdown_exits_with_1(client: RawClient) -> None:
    client.initialize()
    client.notify("exit", {})
    assert client.proc.wait(timeout=20) == 1


def test_exit_before_initialize_exits_with_1(client: RawClient) -> None:
    client.notify("exit", {})
    assert client.proc.wait(timeout=20) == 1


@pytest.mark.parametrize("method", ["no/suchMethod", "$/noSuchMethod", "textDocument/noSuchThing"])
@pytest.mark.parametrize("with_params", [True, False])
def test_unknown_methods_get_method_not_found(client: RawClient, method: str, with_params: bool) -> None:
    client.initialize()
    client.open(URI, TEXT)
    client.next_id += 1
    message: dict = {"jsonrpc": "2.0", "id": client.next_id, "method": method}
    if with_params:
        message["params"] = {}
    client.send(message)
    assert client.response(client.next_id)["error"]["code"] == -32601
    # the same as a notification is ignored, and the server goes on
    client.send({k: v for k, v in message.items() if k != "id"})
    assert "Ref<smem>" in (client.hover(URI, LINE, COL) or "")
    assert client.close() == 0

"""Malformed input on the wire, over a raw stdio client: every framing error, invalid JSON and
invalid request is answered or skipped, and a valid hover right after it is answered correctly."""

from __future__ import annotations

import json
import time

import pytest

from raw_lsp import EXAMPLE, RawClient

URI = "file:///tmp/wgmma_protocol_kernel.py"
TEXT = EXAMPLE.read_text()
LINE = next(i for i, ln in enumerate(TEXT.splitlines()) if "error: acc_ref is not a WGMMA" in ln)
COL = TEXT.splitlines()[LINE].index("acc_ref")


@pytest.fixture(scope="module")
def client():
    c = RawClient()
    c.initialize()
    c.open(URI, TEXT)
    yield c
    assert c.close() == 0


def check_hover(c: RawClient) -> None:
    value = c.hover(URI, LINE, COL)
    assert value is not None and "Ref<smem>{float32[64,128]}" in value, value


def body(message: object) -> bytes:
    return json.dumps(message).encode()


HOVER_ID = 7777


def hover_frame() -> bytes:
    b = body({"jsonrpc": "2.0", "id": HOVER_ID, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": URI}, "position": {"line": LINE, "character": COL}}})
    return b"Content-Length: %d\r\n\r\n" % len(b) + b


FRAMES = {
    "too-short": b"Content-Length: 10\r\n\r\n" + body({"jsonrpc": "2.0", "method": "x/y", "params": {}}),
    "too-long": b"Content-Length: 400\r\n\r\n" + body({"jsonrpc": "2.0", "method": "x/y", "params": {}}),
    "negative": b"Content-Length: -5\r\n\r\n{}",
    "not-a-number": b"Content-Length: lots\r\n\r\n{}",
    "no-length": b"Content-Type: application/json\r\n\r\n{}",
    "garbage": b"hello there\r\n\r\n",
    "long-garbage-line": b"x" * 100_000 + b"\r\n",
    "binary": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_framing_errors_resynchronise(client: RawClient, name: str) -> None:
    client.raw(FRAMES[name] + hover_frame())
    value = client.response(HOVER_ID)["result"]["contents"]["value"]
    assert "Ref<smem>{float32[64,128]}" in value
    check_hover(client)


def test_lowercase_header_names(client: RawClient) -> None:
    b = body({"jsonrpc": "2.0", "id": 41, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": URI}, "position": {"line": LINE, "character": COL}}})
    client.raw(b"content-length: %d\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(b) + b)
    assert "Ref<smem>" in client.response(41)["result"]["contents"]["value"]
    check_hover(client)


def test_invalid_json_gets_a_parse_error(client: RawClient) -> None:
    client.raw(b"Content-Length: 5\r\n\r\n{nope")
    reply = client.response(None)
    assert reply["error"]["code"] == -32700
    check_hover(client)


@pytest.mark.parametrize("message,msg_id", [
    (42, None), ([], None), ("text", None), (None, None),
    ({"id": 5, "method": "textDocument/hover", "params": {}}, 5),  # no jsonrpc
    ({"jsonrpc": "2.0", "id": 6}, 6),  # neither request nor response
    ({"jsonrpc": "2.0", "id": 8, "method": 3}, 8),
    ({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": 3}, 9),
    ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "textDocument/hover"}, None),
    ({"jsonrpc": "1.0", "id": 10, "method": "textDocument/hover"}, 10),
])
def test_invalid_requests_get_invalid_request(client: RawClient, message: object, msg_id: object) -> None:
    client.send(message)
    reply = client.response(msg_id)
    assert reply["error"]["code"] == -32600
    check_hover(client)


def test_a_batch_is_refused_with_each_id(client: RawClient) -> None:
    client.send([{"jsonrpc": "2.0", "id": 11, "method": "shutdown"},
                 {"jsonrpc": "2.0", "id": 12, "method": "shutdown"}])
    assert client.response(11)["error"]["code"] == -32600
    assert client.response(12)["error"]["code"] == -32600
    check_hover(client)  # and the batch's shutdown did not happen


def test_an_over_large_body_is_refused_without_buffering(client: RawClient) -> None:
    from wgmma_lsp.transport import MAX_BODY_BYTES

    claimed = 1 << 30
    rss_before = _rss_kb(client.proc.pid)
    head = b'{"jsonrpc": "2.0", "id": 13, "method": "textDocument/hover", "params": {"x": "'
    client.raw(b"Content-Length: %d\r\n\r\n" % claimed + head)
    assert client.response(13)["error"]["code"] == -32600
    chunk = b"a" * (1 << 20)
    for _ in range(MAX_BODY_BYTES // len(chunk) + 16):  # more than the limit, far less than claimed
        client.raw(chunk)
    rss_kb = _rss_kb(client.proc.pid)
    client.raw(b'"}}\r\n' + hover_frame())  # the client gives up on its huge message
    assert "Ref<smem>" in client.response(HOVER_ID)["result"]["contents"]["value"]
    assert rss_kb - rss_before < 30_000, (rss_before, rss_kb)  # the 80 MB sent were not kept
    check_hover(client)


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_end_of_input_exits_cleanly() -> None:
    c = RawClient()
    c.initialize()
    c.raw(b"Content-Length: 1000\r\n\r\n{\"jsonrpc\"")  # a body cut off by the client's death
    assert c.proc.stdin is not None
    c.proc.stdin.close()
    assert c.proc.wait(timeout=20) is not None  # not alive and deaf
    c.kill()


def test_an_over_large_length_with_a_short_body_does_not_swallow_what_follows(client: RawClient) -> None:
    """The client claims 100 MB, sends a few bytes and keeps the connection open: its next
    message is answered as soon as it comes, not after 100 MB more."""
    client.raw(b"Content-Length: %d\r\n\r\n" % (100 * 2**20)
               + b'{"jsonrpc": "2.0", "id": 14, "method": "textDocument/hover"}')
    assert client.response(14, timeout=5)["error"]["code"] == -32600
    time.sleep(0.7)  # the next message comes in a read of its own
    client.raw(hover_frame())
    assert "Ref<smem>" in client.response(HOVER_ID, timeout=5)["result"]["contents"]["value"]
    check_hover(client)


def test_the_next_header_split_between_two_reads_ends_a_refused_body(client: RawClient) -> None:
    client.raw(b"Content-Length: %d\r\n\r\n{}Content-Le" % (100 * 2**20))
    time.sleep(0.7)
    client.raw(hover_frame()[len(b"Content-Le"):])
    assert "Ref<smem>" in client.response(HOVER_ID, timeout=5)["result"]["contents"]["value"]


@pytest.mark.parametrize("then", ["nothing", "the next message"])
def test_a_body_that_arrives_in_two_reads_is_no_framing_error(client: RawClient, then: str) -> None:
    frame = hover_frame()
    half = len(frame) - 40
    before = client.stderr()
    client.raw(frame[:half])
    time.sleep(0.7)  # longer than the reader waits before it suspects a wrong Content-Length
    client.raw(frame[half:] + (hover_frame() if then != "nothing" else b""))
    assert "Ref<smem>" in client.response(HOVER_ID)["result"]["contents"]["value"]
    check_hover(client)
    new = client.stderr()[len(before):]
    assert "ERROR" not in new and "longer than the message" not in new, new

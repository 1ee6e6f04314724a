"""Malformed input on the wire: the server answers what it can, and stays up."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time


class RawClient:
    """A bare JSON-RPC client over the server's stdio, to send what no real client would."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "wgmma_lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive(self, timeout: float = 20.0) -> dict:
        out = self.proc.stdout
        assert out is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], 0.2)
            if not ready:
                continue
            line = out.readline()
            if line.startswith(b"Content-Length"):
                length = int(line.split(b":")[1])
                while out.readline().strip():
                    pass
                return json.loads(out.read(length))
        raise AssertionError("no message from the server")

    def response(self, msg_id: int) -> dict:
        while True:
            message = self.receive()
            if message.get("id") == msg_id:
                return message


def test_malformed_messages_get_answers_and_the_server_stays_up() -> None:
    client = RawClient()
    try:
        client.raw(b"Content-Length: 5\r\n\r\n{nope")  # not JSON at all
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert "capabilities" in client.response(1)["result"]
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        client.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {}}})
        assert client.response(2)["error"]["code"] == -32602  # answered, not left hanging
        client.send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}})
        assert client.response(3)["error"]["code"] == -32601
        client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": "file:///x.py"}}})  # no text: dropped
        client.send({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}}})
        assert client.response(4)["result"] is None
        client.send({"jsonrpc": "2.0", "id": 5, "method": "shutdown"})
        assert "error" not in client.response(5)
        client.send({"jsonrpc": "2.0", "method": "exit"})
        assert client.proc.wait(timeout=20) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()

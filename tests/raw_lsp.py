"""A bare JSON-RPC client over a server's stdio (no pygls on this side), to send what no real
client would."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "seed_errors.py"


class RawClient:
    def __init__(self, *args: str, env: dict | None = None) -> None:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "wgmma_lsp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log,
                                     env={**os.environ, **(env or {})})
        assert self.proc.stdout is not None
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.notifications: list[dict] = []
        self.next_id = 1000

    # -- sending ------------------------------------------------------------------------------
    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: object) -> None:
        body = json.dumps(message).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object, timeout: float = 30.0) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.response(self.next_id, timeout)

    # -- receiving ----------------------------------------------------------------------------
    def _read(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], min(remaining, 0.2))
        if ready:
            data = os.read(self.fd, 65536)
            if not data:
                raise AssertionError("the server closed its output")
            self.buf += data
        return True

    def receive(self, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = next(int(ln.split(b":")[1]) for ln in head.split(b"\r\n")
                              if ln.lower().startswith(b"content-length:"))
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            if not self._read(deadline):
                raise AssertionError("no message from the server")

    def response(self, msg_id: object, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(max(0.01, deadline - time.monotonic()))
            if "method" not in message and message.get("id") == msg_id:
                return message
            if "method" in message:
                self.notifications.append(message)

    def drain(self, seconds: float) -> None:
        """Collect notifications for a while."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                message = self.receive(max(0.01, deadline - time.monotonic()))
            except AssertionError:
                return
            if "method" in message:
                self.notifications.append(message)

    def diagnostics(self, uri: str) -> list[dict]:
        return [n["params"] for n in self.notifications
                if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]

    # -- a session ----------------------------------------------------------------------------
    def initialize(self, options: dict | None = None) -> None:
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        assert "capabilities" in self.request("initialize", params)["result"]
        self.notify("initialized", {})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})

    def hover(self, uri: str, line: int, character: int, timeout: float = 30.0) -> str | None:
        result = self.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                     "position": {"line": line, "character": character}},
                              timeout)["result"]
        return None if result is None else result["contents"]["value"]

    def close(self) -> int:
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", {})
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

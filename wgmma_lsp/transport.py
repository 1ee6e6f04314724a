"""The JSON-RPC reader: LSP framing that survives any client.

pygls' own reader trusts the client: one bad `Content-Length` and it never finds a header again,
and it buffers whatever body size a client claims. This reader

- reads header blocks with case-insensitive names and `\\r\\n` or `\\n` line ends; a header block
  without a valid `Content-Length` (missing, negative, not a number) is logged and skipped;
- resynchronises after any framing error on the next `Content-Length:` it sees (even mid-line,
  as when a short `Content-Length` leaves the rest of a body in front of the next header);
- notices a `Content-Length` that is too long when the body's JSON value is complete and the next
  header follows it (or nothing more arrives for a moment), instead of waiting for bytes that
  belong to the next message;
- refuses bodies over `MAX_BODY_BYTES` without buffering them (only the first kilobytes are kept,
  to answer a request's id with an error), then resynchronises;
- answers invalid JSON with -32700 and invalid requests (not an object, a batch, no
  `"jsonrpc": "2.0"`, a bad method or id) with -32600, with the request's id when it has one.

Valid messages go to pygls' protocol (`structure_message` + `handle_message`) on the event loop.
On end of input it stops, and the server exits (the editor restarts it): never alive and deaf.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import select
import signal
import threading
from typing import Any, BinaryIO, Callable

log = logging.getLogger("wgmma_lsp.transport")

MAX_BODY_BYTES = 64 * 2**20  # larger messages are refused (and not buffered)
MAX_HEADER_LINE = 8192  # a longer header line is garbage
PEEK_BYTES = 4096  # of a refused body, kept to find its id
STALL_SECONDS = 0.5  # a body whose JSON is complete, with nothing more coming: take it
CHUNK = 65536

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_MARKER = b"content-length:"
_HEADER = re.compile(rb"[ \t]*([A-Za-z0-9_-]+)[ \t]*:(.*)", re.S)
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


class _EOF(Exception):
    pass


class FrameReader:
    """Splits a byte stream into message bodies (or framing problems), in one thread."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.buf = bytearray()
        self.eof = False

    # -- low level --------------------------------------------------------------------------
    def _fill(self, timeout: float | None = None) -> bool:
        """Read more bytes; False on timeout. Raises _EOF at end of input."""
        if self.eof:
            raise _EOF()
        if self.fd is not None:
            if timeout is not None:
                ready, _, _ = select.select([self.fd], [], [], timeout)
                if not ready:
                    return False
            data = os.read(self.fd, CHUNK)
        else:
            read1 = getattr(self.stream, "read1", None)
            data = read1(CHUNK) if read1 is not None else self.stream.read(CHUNK)
        if not data:
            self.eof = True
            raise _EOF()
        self.buf += data
        return True

    def _line(self) -> bytes | None:
        """One header line without its line end; None if it is longer than a header can be
        (the bytes are dropped up to the next line end)."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 1]
                return line.rstrip(b"\r") if len(line) <= MAX_HEADER_LINE else None
            if len(self.buf) > MAX_HEADER_LINE:
                self._drop_to_newline()
                return None
            self._fill()

    def _drop_to_newline(self) -> None:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                del self.buf[:i + 1]
                return
            keep = self._marker_tail()
            self.buf = bytearray(self.buf[keep:]) if keep else bytearray()
            if self._find_marker() is not None:
                return
            self._fill()

    def _find_marker(self) -> int | None:
        i = bytes(self.buf[:]).lower().find(_MARKER)
        return i if i >= 0 else None

    def _marker_tail(self) -> int:
        """Where to cut the buffer when scanning, keeping a possible partial marker."""
        return max(0, len(self.buf) - len(_MARKER))

    def resync(self) -> int:
        """Drop bytes up to the next `Content-Length:` (returns how many were dropped)."""
        dropped = 0
        while True:
            i = self._find_marker()
            if i is not None:
                del self.buf[:i]
                return dropped + i
            cut = self._marker_tail()
            dropped += cut
            del self.buf[:cut]
            self._fill()

    # -- frames -----------------------------------------------------------------------------
    def next_frame(self) -> tuple[str, Any]:
        """("body", bytes) | ("too-large", (length, first bytes)) | ("error", reason).

        Raises _EOF at end of input."""
        length: int | None = None
        problem: str | None = None
        first = True
        while True:
            line = self._line()
            if line is None:
                return "error", "a header line too long"
            if not line.strip():
                if first:
                    continue  # blank lines between messages
                break
            first = False
            match = _HEADER.fullmatch(line)
            if match is None:
                # Not a header: the rest of a body whose Content-Length was too short, say.
                # A header may still start inside it: read on from there.
                i = line.lower().find(_MARKER)
                if i > 0:
                    self.buf[0:0] = line[i:] + b"\n"
                    log.error("framing error: skipped %d bytes of garbage before a header", i)
                    length, problem, first = None, None, True
                    continue
                return "error", f"not a header line: {line[:80]!r}"
            name, value = match.group(1), match.group(2)
            if name.lower() == b"content-length":
                text = value.strip()
                if not text.isdigit():
                    problem = f"Content-Length is not a non-negative integer: {text[:40]!r}"
                else:
                    length = int(text)
        if problem is not None:
            return "error", problem
        if length is None:
            return "error", "a header block without Content-Length"
        if length > MAX_BODY_BYTES:
            return "too-large", (length, self._peek(PEEK_BYTES))
        return "body", self._body(length)

    def _body(self, length: int) -> bytes:
        """The declared number of bytes, or fewer if the declared length was too long: the body's
        JSON value is complete and the next message's header follows it (or nothing follows)."""
        while len(self.buf) < length:
            before = len(self.buf)
            try:
                got = self._fill(STALL_SECONDS if self.fd is not None else None)
            except _EOF:
                got = False
                if not self.buf:
                    raise
            if len(self.buf) >= length:
                break  # the rest of a correct body (and maybe the next message) came in
            if not got or _MARKER in bytes(self.buf[max(0, before - len(_MARKER)):]).lower() or self.eof:
                end = _complete_json_end(self.buf)
                if end is not None and end < length:
                    rest = bytes(self.buf[end:end + 64]).lstrip()
                    if not rest or rest.lower().startswith(_MARKER):
                        body = bytes(self.buf[:end])
                        del self.buf[:end]
                        log.error("Content-Length %d is longer than the message (%d bytes): "
                                  "took the message, reading on from the next header", length, end)
                        return body
                if self.eof:
                    raise _EOF()
        body = bytes(self.buf[:length])
        del self.buf[:length]
        return body

    def _peek(self, n: int) -> bytes:
        """Up to `n` bytes from the input, without consuming them (what has come in meanwhile)."""
        while len(self.buf) < n:
            try:
                if not self._fill(STALL_SECONDS if self.fd is not None else None):
                    break
            except _EOF:
                break
        return bytes(self.buf[:n])

    def skip_body(self, length: int) -> None:
        """Drop an over-large body as it comes (never holding more than a chunk of it), up to
        its declared length or the next `Content-Length:`, whichever comes first. The next
        header is looked for in everything that arrives (at the start of a read, or split
        between two reads, too): a client that sent a short body after an over-large length
        is answered as soon as its next message comes, not after `length` more bytes."""
        remaining = length
        while remaining > 0:
            take = min(remaining, len(self.buf))
            i = bytes(self.buf[:take + len(_MARKER)]).lower().find(_MARKER)
            if 0 <= i < take:
                del self.buf[:i]
                return
            # keep what may be the start of a marker that the next read completes
            cut = take if take == remaining else max(0, take - (len(_MARKER) - 1))
            del self.buf[:cut]
            remaining -= cut
            if remaining:
                self._fill()


def _complete_json_end(buf: bytearray) -> int | None:
    """The end of the JSON value at the start of `buf`, if it is complete."""
    try:
        text = bytes(buf).decode("utf-8", errors="surrogateescape")
        _value, end = json.JSONDecoder().raw_decode(text.lstrip())
    except (ValueError, RecursionError):
        return None
    skipped = len(text) - len(text.lstrip())
    return len(text[:skipped + end].encode("utf-8", errors="surrogateescape"))


def invalid_request_reason(message: Any) -> str | None:
    """Why a decoded message is not a JSON-RPC 2.0 request, notification or response."""
    if not isinstance(message, dict):
        return "a batch (not supported by LSP)" if isinstance(message, list) else "not a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return "the id is not a number or a string"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "the method is not a string"
        params = message.get("params")
        if "params" in message and params is not None and not isinstance(params, (dict, list)):
            return "params must be an object or an array"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of our requests
    return "neither a request, a notification nor a response"


def _valid_id(value: Any) -> bool:
    return (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
            or value is None)


def _id_of(message: Any) -> Any:
    if isinstance(message, dict) and _valid_id(message.get("id")):
        return message.get("id")
    return None


def error_response(msg_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


class Dispatcher:
    """Reads frames in a thread; answers what is malformed, hands the rest to the protocol."""

    def __init__(self, protocol: Any, loop: asyncio.AbstractEventLoop,
                 send: Callable[[dict], None]) -> None:
        self.protocol = protocol
        self.loop = loop
        self.send = send  # called on the event loop

    def run(self, stream: BinaryIO, done: "asyncio.Future[str]") -> None:
        reader = FrameReader(stream)
        reason = "end of input"
        try:
            while True:
                kind, payload = reader.next_frame()
                if kind == "error":
                    dropped = reader.resync()
                    log.error("framing error (%s): skipped %d bytes to the next header", payload, dropped)
                elif kind == "too-large":
                    length, head = payload
                    log.error("refused a message of %d bytes (limit %d)", length, MAX_BODY_BYTES)
                    match = _ID.search(head)
                    if match is not None and b'"method"' in head:
                        msg_id = json.loads(match.group(1))
                        self._call(self.send, error_response(
                            msg_id, INVALID_REQUEST, f"message too large: {length} bytes, "
                            f"the limit is {MAX_BODY_BYTES}"))
                    reader.skip_body(length)
                else:
                    self._call(self.handle_body, payload)
        except _EOF:
            pass
        except Exception as exc:  # a bug here must not leave the server alive and deaf
            log.exception("the message reader failed: exiting")
            reason = f"reader failed: {exc}"
        try:
            self.loop.call_soon_threadsafe(_resolve, done, reason)
        except RuntimeError:  # the loop is gone already
            pass

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the server is exiting
            raise _EOF()

    def handle_body(self, body: bytes) -> None:
        """On the event loop: decode, validate, dispatch one message."""
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            log.error("invalid JSON: %s", exc)
            self.send(error_response(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        reason = invalid_request_reason(message)
        if reason is not None:
            log.error("invalid request (%s)", reason)
            if isinstance(message, list) and message:
                ids = [_id_of(m) for m in message if _id_of(m) is not None]
                for msg_id in ids or [None]:
                    self.send(error_response(msg_id, INVALID_REQUEST, f"Invalid request: {reason}"))
            else:
                self.send(error_response(_id_of(message), INVALID_REQUEST, f"Invalid request: {reason}"))
            return
        admit = getattr(self.protocol, "admit", None)  # the lifecycle's rules (lifecycle.py)
        if admit is not None and not admit(message):
            return
        try:
            structured = self.protocol.structure_message(message)
            self.protocol.handle_message(structured)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            log.exception("unable to handle a message")
            if "method" in message and "id" in message:
                code = getattr(exc, "CODE", -32603)
                self.send(error_response(message["id"], code, f"{type(exc).__name__}: {exc}"))


def _resolve(fut: "asyncio.Future[str]", reason: str) -> None:
    if not fut.done():
        fut.set_result(reason)


async def serve(protocol: Any, stdin: BinaryIO, send: Callable[[dict], None]) -> str:
    """Read and dispatch until end of input; returns why it stopped."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    dispatcher = Dispatcher(protocol, loop, send)
    thread = threading.Thread(target=dispatcher.run, args=(stdin, done), name="wgmma-lsp-reader",
                              daemon=True)
    thread.start()
    for signum in (signal.SIGINT, signal.SIGTERM):  # stop as at end of input: promptly
        try:
            loop.add_signal_handler(signum, _resolve, done, signal.Signals(signum).name)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such API
            log.debug("no handler for %s", signum, exc_info=True)
    return await done

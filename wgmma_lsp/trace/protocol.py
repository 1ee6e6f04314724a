"""The server's side of the worker's protocol: it never trusts the stream.

The worker runs the user's code, and that code can write to the protocol's pipe too (it is an
open descriptor of its process). So every read is bounded (one line at most `MAX_LINE` bytes,
the whole stream at most `MAX_TOTAL`), stderr keeps only its last `STDERR_TAIL` bytes in memory,
and every event is checked against the protocol's schema (worker.py's docstring): its fields and
their types, string lengths, entry ids, and every position inside the traced file. An event that
fails is dropped with a log line; an aval record that fails is dropped alone.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any, Callable

log = logging.getLogger("wgmma_lsp.trace")

MAX_LINE = 4 * 2**20  # bytes of one event
MAX_TOTAL = 16 * 2**20  # bytes of the whole protocol stream
STDERR_TAIL = 64 * 1024  # bytes of stderr kept (the end: where faulthandler's stack dump lands)
MAX_TEXT = 8000  # characters of a message (the worker cuts at 4,000)
MAX_SHORT = 4096  # characters of a type name, a frame, a version
MAX_AVALS = 20000  # aval records of one entry point (the worker's own cap)
MAX_AVAL_STRINGS = 256
_STAGES = {"ok", "entry", "trace", "lower"}
_ORIGINS = {"user-frame", "mlir-location", "none"}
_LIMITATIONS = {None, "no-lowering-rule", "no-device"}
_ERROR_KEYS = {"type", "message", "blame", "origin", "jax_frame", "memory", "limitation", "no_jax"}
_EVENT_KEYS = {
    "hello": {"event", "jax", "python"},
    "stage": {"event", "stage", "id"},
    "import": {"event", "error"},
    "entry": {"event", "id", "stage", "lowered", "error", "avals"},
    "done": {"event"},
}


class Invalid(ValueError):
    """An event the protocol does not allow (the message says why)."""


class StreamReader:
    """Reads the worker's protocol pipe in a thread: lines of at most MAX_LINE bytes, at most
    MAX_TOTAL bytes in all; past that `on_flood` is called once and reading stops."""

    def __init__(self, fd: int, on_flood: Callable[[], None]) -> None:
        self.lines: list[bytes] = []
        self.total = 0
        self.oversized = 0
        self.flooded = False
        self._fd = fd
        self._on_flood = on_flood
        self.thread = threading.Thread(target=self._run, name="wgmma-lsp-trace-out", daemon=True)

    def _run(self) -> None:
        buf = bytearray()
        skipping = False  # inside a line over MAX_LINE: discard until its newline
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if self.total > MAX_TOTAL:
                self.flooded = True
                log.warning("trace worker sent over %d bytes of protocol data: stopped", MAX_TOTAL)
                self._on_flood()
                break
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                if not skipping:
                    self.lines.append(bytes(buf[:nl]))
                skipping = False
                del buf[:nl + 1]
            if len(buf) > MAX_LINE:
                if not skipping:
                    self.oversized += 1
                    log.warning("trace worker sent an event over %d bytes: dropped", MAX_LINE)
                skipping = True
                buf.clear()
        try:
            os.close(self._fd)
        except OSError:
            pass


class TailReader:
    """Reads stderr in a thread, keeping its first line (the supervisor's banner, written before
    any user code exists) and only the last STDERR_TAIL bytes: never a growing file."""

    def __init__(self, fd: int) -> None:
        self.first_line = b""
        self.tail = bytearray()
        self.total = 0
        self._fd = fd
        self.thread = threading.Thread(target=self._run, name="wgmma-lsp-trace-err", daemon=True)

    def _run(self) -> None:
        head = bytearray()
        have_head = False
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if not have_head:
                head += chunk
                nl = head.find(b"\n")
                if nl >= 0 or len(head) > 4096:
                    have_head = True
                    cut = nl if nl >= 0 else len(head)
                    self.first_line = bytes(head[:cut])
                    chunk = bytes(head[cut + 1:])
                else:
                    continue
            self.tail += chunk
            if len(self.tail) > STDERR_TAIL:
                del self.tail[:len(self.tail) - STDERR_TAIL]
        try:
            os.close(self._fd)
        except OSError:
            pass


def _str(v: Any, limit: int, what: str, optional: bool = False) -> None:
    if v is None and optional:
        return
    if not isinstance(v, str) or len(v) > limit:
        raise Invalid(f"{what} is not a string of at most {limit} characters")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_span(span: Any, lines: list[str]) -> None:
    """`[line, col, end_line, end_col]`, 0-based, inside the traced file (columns may be null;
    they are bounded by the line's length in UTF-8 bytes, which the worker's columns count)."""
    if not isinstance(span, list) or len(span) != 4:
        raise Invalid("a position is not [line, col, end_line, end_col]")
    line, col, end_line, end_col = span
    count = max(len(lines), 1)
    if not (_int(line) and _int(end_line) and 0 <= line <= end_line < count):
        raise Invalid(f"a position {span!r} lies outside the file's {len(lines)} lines")
    for c, at in ((col, line), (end_col, end_line)):
        if c is None:
            continue
        width = len(lines[at].encode("utf-8")) if at < len(lines) else 0
        if not _int(c) or not 0 <= c <= width + 1:
            raise Invalid(f"a column of {span!r} lies outside its line")


def check_error(err: Any, lines: list[str]) -> None:
    if err is None:
        return
    if not isinstance(err, dict):
        raise Invalid("an error is not an object")
    extra = set(err) - _ERROR_KEYS
    if extra:
        raise Invalid(f"an error has fields the protocol does not have: {sorted(extra)}")
    _str(err.get("type"), MAX_SHORT, "an error's type")
    _str(err.get("message"), MAX_TEXT, "an error's message")
    if err.get("blame") is not None:
        check_span(err["blame"], lines)
    if err.get("origin", "none") not in _ORIGINS:
        raise Invalid("an error's origin is unknown")
    _str(err.get("jax_frame"), MAX_SHORT, "an error's frame", optional=True)
    for flag in ("memory", "no_jax"):
        if flag in err and not isinstance(err[flag], bool):
            raise Invalid(f"an error's {flag} is not a boolean")
    if err.get("limitation") not in _LIMITATIONS:
        raise Invalid("an error's limitation is unknown")


def clean_avals(recs: Any, lines: list[str]) -> tuple[list[dict], int]:
    """The aval records that follow the schema, and how many did not."""
    if not isinstance(recs, list):
        raise Invalid("avals is not a list")
    good, bad = [], 0
    for rec in recs[:MAX_AVALS]:
        try:
            if not isinstance(rec, dict) or set(rec) != {"span", "primitive", "avals"}:
                raise Invalid("an aval record has the wrong fields")
            check_span(rec["span"], lines)
            _str(rec["primitive"], 200, "a primitive")
            avals = rec["avals"]
            if not isinstance(avals, list) or len(avals) > MAX_AVAL_STRINGS:
                raise Invalid("an aval list is too long")
            for a in avals:
                _str(a, 1000, "an aval")
        except Invalid:
            bad += 1
            continue
        good.append(rec)
    return good, bad + max(len(recs) - MAX_AVALS, 0)


def check_event(ev: Any, n_entries: int, lines: list[str]) -> dict:
    """The event if the protocol allows it (aval records cleaned); raises Invalid otherwise."""
    if not isinstance(ev, dict):
        raise Invalid("an event is not an object")
    kind = ev.get("event")
    allowed = _EVENT_KEYS.get(kind) if isinstance(kind, str) else None
    if allowed is None:
        raise Invalid(f"unknown event {str(kind)[:40]!r}")
    extra = set(ev) - allowed
    if extra:  # e.g. a "uri" or "path": results only ever concern the traced file
        raise Invalid(f"a {kind!r} event has fields the protocol does not have: {sorted(extra)}")
    if kind == "hello":
        _str(ev.get("jax"), 64, "the jax version", optional=True)
        _str(ev.get("python"), 64, "the python version", optional=True)
    elif kind == "stage":
        if ev.get("stage") not in ("import", "entry"):
            raise Invalid("unknown stage")
        if ev["stage"] == "entry" and not (_int(ev.get("id")) and 0 <= ev["id"] < n_entries):
            raise Invalid("a stage names no entry point")
    elif kind == "import":
        check_error(ev.get("error"), lines)
    elif kind == "entry":
        if not (_int(ev.get("id")) and 0 <= ev["id"] < n_entries):
            raise Invalid(f"an entry result names no entry point ({str(ev.get('id'))[:20]})")
        if ev.get("stage") not in _STAGES or not isinstance(ev.get("lowered"), bool):
            raise Invalid("an entry result has a wrong stage or lowered flag")
        check_error(ev.get("error"), lines)
        ev = dict(ev)
        ev["avals"], bad = clean_avals(ev.get("avals", []), lines)
        if bad:
            log.warning("trace worker: %d aval records outside the protocol dropped", bad)
    return ev


def parse_events(raw_lines: list[bytes], n_entries: int, source: str) -> tuple[list[dict], dict | None]:
    """The valid events (at most one hello, import and done, one result per entry point; the
    first wins) and the last stage event. Everything else is dropped, with a log line."""
    lines = source.splitlines()
    events: list[dict] = []
    stage = None
    seen: set[tuple] = set()
    dropped = 0
    for raw in raw_lines:
        try:
            ev = check_event(json.loads(raw), n_entries, lines)
        except (ValueError, RecursionError) as e:  # Invalid is a ValueError, like JSON's
            dropped += 1
            if dropped <= 5:
                log.warning("trace worker event dropped: %s", str(e)[:200])
            continue
        if ev["event"] == "stage":
            stage = ev
            continue
        key = (ev["event"], ev.get("id"))
        if key in seen:
            dropped += 1
            log.warning("trace worker sent a second %r event%s: dropped", ev["event"],
                        f" for entry {ev['id']}" if "id" in ev else "")
            continue
        seen.add(key)
        events.append(ev)
    if dropped > 5:
        log.warning("trace worker: %d events dropped in all", dropped)
    return events, stage

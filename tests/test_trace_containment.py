"""Trace mode contains the user's code as docs/trace-mode.md says: nothing it starts outlives the
trace, it cannot kill the server, its protocol stream and stderr cannot flood the server, its
/dev/shm and temporary files are removed, memory is counted once per page, and at most
`trace.concurrency` traces run at once. Each test traces a small hostile module in a tmp dir."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from wgmma_lsp.settings import Settings
from wgmma_lsp.trace.check import request_for
from wgmma_lsp.trace.containment import SHM, Slots, tree_memory_mb, tree_rss_mb
from wgmma_lsp.trace.protocol import MAX_TOTAL, STDERR_TAIL
from wgmma_lsp.trace.report import MEMORY_LIMIT, outcome_diagnostics
from wgmma_lsp.trace.runner import TraceProcess, set_concurrency

pytest.importorskip("jax")

ENTRY = '''

def f(a):
    return a


# wgmma-lsp: trace f(f32[8,128])
'''

#: A daemon that leaves the worker's session by a double fork and writes its pid as seen
#: outside the trace (its /proc/self link: /proc is the host's).
DAEMON = '''
import os, sys, time

def start_daemon(pidfile):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile + ".tmp", "w") as f:
                f.write(os.readlink("/proc/self"))
            os.replace(pidfile + ".tmp", pidfile)
            while True:
                time.sleep(1)
        os._exit(0)
    while not os.path.exists(pidfile):
        time.sleep(0.05)

def ppid_of(pid):
    stat = open(f"/proc/{pid}/stat", "rb").read()
    return int(stat[stat.rindex(b")") + 2:].split()[1])

def kill_ancestors(stop):
    """SIGKILL every ancestor (as /proc shows them) up to, not including, `stop`."""
    pid = ppid_of(int(os.readlink("/proc/self")))
    while pid > 1 and pid != stop:
        nxt = ppid_of(pid)
        try:
            os.kill(pid, 9)
        except OSError as e:
            print("kill", pid, "->", e, file=sys.stderr)
        pid = nxt
'''


def _module(tmp_path: Path, body: str, name: str = "hostile.py") -> Path:
    path = tmp_path / name
    path.write_text(DAEMON + textwrap.dedent(body) + ENTRY)
    return path


def _request(path: Path, **settings):
    settings.setdefault("trace_timeout", 30.0)
    return request_for(path, path.read_text(), Settings(**settings))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"


def _gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_user_code_that_kills_every_ancestor_kills_neither_the_server_nor_leaves_its_daemon(
        tmp_path: Path) -> None:
    """The module starts a setsid daemon, then SIGKILLs its parent, its supervisor and the
    server above them. A stand-in server (this test's child) runs the trace: it survives and
    reports the result, and the daemon is gone after the trace."""
    pidfile = tmp_path / "daemon.pid"
    path = _module(tmp_path, f'''
        start_daemon({str(pidfile)!r})
        kill_ancestors(int(os.environ["WGMMA_TEST_STOP"]))
        time.sleep(1)
    ''')
    server = textwrap.dedent(f'''
        import json
        from pathlib import Path
        from wgmma_lsp.settings import Settings
        from wgmma_lsp.trace.check import request_for
        from wgmma_lsp.trace.runner import TraceProcess
        path = Path({str(path)!r})
        out = TraceProcess(request_for(path, path.read_text(), Settings(trace_timeout=30))).wait()
        print(json.dumps({{"status": out.status, "containment": out.containment,
                          "stderr": out.stderr[-2000:]}}))
    ''')
    env = {**os.environ, "WGMMA_TEST_STOP": str(os.getpid())}
    done = subprocess.run([sys.executable, "-c", server], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # the server lived
    result = json.loads(done.stdout.splitlines()[-1])
    daemon = int(pidfile.read_text())
    assert _gone(daemon), "the setsid daemon outlived the trace"
    if not result["containment"].startswith("pid-namespace"):
        pytest.skip(f"no PID namespace here: {result['containment']}")
    assert result["status"] == "ok", result  # its kills reached nothing outside the namespace


def test_without_a_namespace_a_daemon_outlives_neither_a_sigkilled_supervisor(tmp_path: Path) -> None:
    """The fallback (no PID namespace): the module SIGKILLs its init and its supervisor after
    starting a daemon; the runner kills the daemon it saw in the tree, and reports a crash."""
    pidfile = tmp_path / "daemon.pid"
    path = _module(tmp_path, f'''
        start_daemon({str(pidfile)!r})
        time.sleep(2.0)  # the runner looks at the tree ten times a second
        kill_ancestors(int(os.environ["WGMMA_TEST_STOP"]))
        time.sleep(1)
    ''')
    request = _request(path)
    request.namespaces = False
    os.environ["WGMMA_TEST_STOP"] = str(os.getpid())
    try:
        outcome = TraceProcess(request).wait()
    finally:
        del os.environ["WGMMA_TEST_STOP"]
    assert outcome.containment.startswith("process-tree")
    daemon = int(pidfile.read_text())
    assert _gone(daemon), "the setsid daemon outlived the trace"
    # (usually the runner's sweep of what it saw kills it: `daemon in outcome.leftovers`; on a
    # loaded machine it was once gone before the sweep, its pid not in the list: what is
    # guaranteed is that it does not outlive the trace)
    assert outcome.status == "crashed"  # the supervisor's death is a failed trace


def test_a_protocol_flood_is_cut_off(tmp_path: Path) -> None:
    """The module writes 8 MiB lines to the protocol stream, more than MAX_TOTAL in all: the
    runner keeps none of the oversized lines, stops reading and kills the trace."""
    path = _module(tmp_path, '''
        proto = sys.modules["__main__"]._OUT
        line = "x" * (8 << 20)
        for _ in range(64):
            proto.write(line + "\\n")
    ''')
    proc = TraceProcess(_request(path))
    outcome = proc.wait()
    assert outcome.status == "flood"
    assert _gone(proc.pid)
    assert all(len(json.dumps(ev)) < 10000 for ev in outcome.events)
    [diag] = outcome_diagnostics(outcome)
    assert "more protocol data than allowed" in diag.message
    assert MAX_TOTAL < 64 * (8 << 20)


def test_stderr_is_kept_as_a_bounded_tail_and_the_private_tmpdir_is_removed(tmp_path: Path) -> None:
    record = tmp_path / "tmpdir.txt"
    path = _module(tmp_path, f'''
        import tempfile
        open({str(record)!r}, "w").write(tempfile.gettempdir())
        open(os.path.join(tempfile.gettempdir(), "left-behind"), "w").write("x")
        chunk = "e" * 65536 + "\\n"
        for _ in range(800):  # 50 MiB
            sys.stderr.write(chunk)
        sys.stderr.write("END-OF-STDERR\\n")
    ''')
    outcome = TraceProcess(_request(path)).wait()
    assert outcome.status == "ok", outcome.stderr[-500:]
    assert outcome.stderr_bytes > 50 * 2**20
    assert len(outcome.stderr.encode()) <= STDERR_TAIL
    assert "END-OF-STDERR" in outcome.stderr
    private = record.read_text()
    assert "wgmma-lsp-trace-" in private and not os.path.exists(private)


def test_forged_results_are_dropped_with_a_log_line(tmp_path: Path, caplog) -> None:
    """Events the protocol does not allow (another file's uri, a line past the end of the file,
    an entry point that does not exist, a wrong type) are dropped; the real result stands."""
    path = _module(tmp_path, '''
        proto = sys.modules["__main__"]._OUT
        err = {"type": "X", "message": "forged", "blame": [0, 0, 0, 1], "origin": "user-frame",
               "jax_frame": None, "memory": False, "limitation": None}
        forged = [
            {"event": "entry", "id": 0, "stage": "trace", "lowered": False, "error": err,
             "avals": [], "uri": "file:///etc/passwd"},
            {"event": "entry", "id": 0, "stage": "trace", "lowered": False, "avals": [],
             "error": {**err, "blame": [10**6, 0, 10**6, 5]}},
            {"event": "entry", "id": 7, "stage": "trace", "lowered": False, "error": err, "avals": []},
            {"event": "entry", "id": "0", "stage": "trace", "lowered": False, "error": err, "avals": []},
        ]
        for ev in forged:
            proto.write(json.dumps(ev) + "\\n")
        proto.flush()
    ''')
    path.write_text("import json\n" + path.read_text())
    with caplog.at_level(logging.WARNING, logger="wgmma_lsp.trace"):
        outcome = TraceProcess(_request(path)).wait()
    assert outcome.status == "ok"
    assert outcome.entry_results[0]["error"] is None  # the worker's own result
    assert all("forged" not in d.message for d in outcome_diagnostics(outcome))
    logged = caplog.text
    assert "fields the protocol does not have: ['uri']" in logged
    assert "outside the file" in logged
    assert "names no entry point" in logged


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespace", "fallback"])
def test_dev_shm_files_of_the_trace_are_removed(tmp_path: Path, namespaces: bool) -> None:
    if not SHM.is_dir():
        pytest.skip("no /dev/shm")
    tag = f"wgmma-test-{uuid.uuid4().hex[:8]}"
    path = _module(tmp_path, f'''
        from multiprocessing import shared_memory
        open("/dev/shm/{tag}-file", "w").write("x" * 4096)
        segment = shared_memory.SharedMemory(name="{tag}-segment", create=True, size=1 << 16)
    ''')
    request = _request(path)
    request.namespaces = namespaces
    outcome = TraceProcess(request).wait()
    assert outcome.status == "ok", outcome.stderr[-500:]
    assert [p.name for p in SHM.iterdir() if p.name.startswith(tag)] == []


def test_idle_forks_are_counted_once(tmp_path: Path) -> None:
    """A process holding 100 MiB forks 12 idle children: the RSS of the tree sums to 13 x 100 MiB,
    the PSS (what the watchdog compares with the limit) to about 100 MiB."""
    code = textwrap.dedent('''
        import os, sys, time
        data = bytearray(100 << 20)
        for i in range(0, len(data), 4096):
            data[i] = 1
        for _ in range(12):
            if os.fork() == 0:  # an idle child: sleeps, never forks
                time.sleep(30)
                os._exit(0)
        time.sleep(0.5)
        print("ready", flush=True)
        time.sleep(30)
    ''')
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        rss, pss = tree_rss_mb(parent.pid), tree_memory_mb(parent.pid)
        assert rss is not None and pss is not None
        assert rss > 12 * 100
        assert pss < 300, (rss, pss)
    finally:
        parent.kill()
        parent.wait()


def test_a_trace_with_idle_forks_is_not_over_its_memory_limit(tmp_path: Path) -> None:
    """Twelve idle forks of the worker (JAX loaded: ~13 x its RSS summed) under a limit the sum
    would exceed: no TRACE004."""
    path = _module(tmp_path, '''
        kids = []
        for _ in range(12):
            pid = os.fork()
            if pid == 0:
                time.sleep(2.5)
                os._exit(0)
            kids.append(pid)
        time.sleep(1.5)
        for pid in kids:
            os.waitpid(pid, 0)
    ''')
    outcome = TraceProcess(_request(path, trace_memory_mb=1500)).wait()
    assert outcome.status == "ok", outcome.stderr[-500:]
    assert all((d.code, d.name) != MEMORY_LIMIT for d in outcome_diagnostics(outcome))


def test_slots_queue_beyond_the_limit_and_a_cancel_leaves_the_queue() -> None:
    slots = Slots(2)
    never = threading.Event()
    assert slots.acquire(never) and slots.acquire(never)
    cancelled = threading.Event()
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(slots.acquire(cancelled)))
    waiter.start()
    time.sleep(0.3)
    assert got == [] and slots.running == 2  # waiting for a slot
    cancelled.set()
    waiter.join(2)
    assert got == [False]
    slots.release()
    assert slots.acquire(never) and slots.peak == 2


def test_at_most_trace_concurrency_traces_run_at_once(tmp_path: Path) -> None:
    log = tmp_path / "times.txt"
    paths = [_module(tmp_path, f'''
        open({str(log)!r}, "a").write(f"start {{time.time()}}\\n")
        time.sleep(1)
        open({str(log)!r}, "a").write(f"end {{time.time()}}\\n")
    ''', name=f"m{i}.py") for i in range(2)]
    set_concurrency(1)
    try:
        procs = [TraceProcess(_request(p)) for p in paths]
        threads = [threading.Thread(target=p.wait) for p in procs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        set_concurrency(None)
    events = [ln.split()[0] for ln in log.read_text().splitlines()]
    assert events == ["start", "end", "start", "end"]  # never two at once


def test_the_schema_keeps_the_first_result_and_drops_avals_outside_the_file_alone() -> None:
    from wgmma_lsp.trace.protocol import parse_events

    source = "def f(a):\n    return a\n"
    good_aval = {"span": [1, 4, 1, 12], "primitive": "add", "avals": ["f32[8]"]}
    lines = [json.dumps(ev).encode() for ev in (
        {"event": "hello", "jax": "0.10.2", "python": "3.11.9"},
        {"event": "stage", "stage": "entry", "id": 0},
        {"event": "entry", "id": 0, "stage": "ok", "lowered": True, "error": None,
         "avals": [good_aval, {**good_aval, "span": [2, 0, 2, 1]},  # line 3 of a 2-line file
                   {**good_aval, "span": [1, 0, 1, 400]}]},  # a column far past the line
        {"event": "entry", "id": 0, "stage": "trace", "lowered": False, "avals": [],
         "error": {"type": "X", "message": "second", "blame": None, "origin": "none"}},
        {"event": "done"},
    )] + [b"not json", b"[1, 2]"]
    events, stage = parse_events(lines, 1, source)
    assert [ev["event"] for ev in events] == ["hello", "entry", "done"]
    assert events[1]["stage"] == "ok" and events[1]["avals"] == [good_aval]
    assert stage == {"event": "stage", "stage": "entry", "id": 0}

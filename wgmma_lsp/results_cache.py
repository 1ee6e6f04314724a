"""`check`'s result cache: a file whose text, settings and everything its analysis looked at are
unchanged since an earlier run gets that run's diagnostics without being analysed again.

As ruff keeps lint results and mypy its incremental state, but in the user cache directory
(user_cache.py, `results/`), never in the checked folder: a cache a repository could ship would
let it forge its own "All checks passed!". One entry per checked file (by absolute path), JSON,
written atomically (a temporary file renamed over it). An entry holds:

- the run's key: the format, wgmma-lsp's own files (path, mtime, size of each), the Python and
  its `sys.path`, the environment variables the analysis reads, the working directory, the
  analysed JAX (environment.py) and the file's settings;
- the digest of the file's text;
- what the analysis saw: the file system (observed.py: every stamp, probe, listing and glob),
  the pre-filter's answers to "can this import bring in a JAX API?" (batch.py) and what jedi
  said an import is, where an analysis used it. Kept as a length of its process' log (`logs/`,
  one line per observation, appended: the entries of one process share it; a log no entry
  refers to is deleted after an hour; at most MAX_ENTRIES entries are kept);
- the result: diagnostics (with their fixes and related places), the places the analysis
  stopped short, the kernels it saw.

An entry counts only when the key and the text's digest are equal and every observation still
holds (each looked at once per run). What observed.py records is a superset of what the
analysis read (its log only grows within a process), so a change invalidates at least every
result it can affect; what jedi found for an import (its own reads are not observed) is asked
again. Not cached: a crash, `--trace` (it runs the user's code). An entry that cannot be read or parsed is
ignored with a log line and rewritten; a folder that cannot be written costs only the speed.
`check --no-cache` neither reads nor writes entries.

A limit it shares with ruff's and mypy's caches: a dependency rewritten at the same size within
one tick of the file system's clock, after the analysis read it, keeps its stamp and is taken
as unchanged (the checked file itself is compared by content, always).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from wgmma_lsp import logs
from wgmma_lsp import observed, user_cache
from wgmma_lsp.digest import blake2b
from wgmma_lsp.ide_model import Diagnostic, Fix, RelatedInfo, Severity, TextEdit
from wgmma_lsp.settings import Settings
from wgmma_lsp.spans import Span

log = logs.logger()

FORMAT = 1
#: Environment variables the analysis reads (program/lookup.py, interpret/incomplete.py).
ENV_VARS = ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "WGMMA_LSP_STRICT")
#: Kinds of fact recorded besides the file system's: the pre-filter's answers (batch.py,
#: ("api", path\0module\0name) -> bool) and what jedi found for an import an analysis used
#: (jedi_resolve.OBSERVATION, asked again to validate).
API = "api"
JEDI = "jedi"  # jedi_resolve.OBSERVATION (a test checks they agree)

_PACKAGE = Path(__file__).resolve().parent
_tool: str | None = None
_held_names: set[str] = set()  # this process' tool digest memo (never collected while used)
_held: dict[tuple[str, str], bool] = {}  # observations checked this run
_logs: dict[str, list | None] = {}  # observation logs read this run (None: unreadable)
_writing: tuple[int, str, int] | None = None  # this process's log: (pid, id, items written)
#: A log no entry refers to is deleted once it is this old (a run still writing it is younger).
STALE_LOG_SECONDS = 3600
#: Entries kept (the least recently written deleted first, after a run that wrote some).
MAX_ENTRIES = 20_000


@dataclass
class Cached:
    """A result read from the cache (the fields batch.FileResult takes from an analysis)."""
    diagnostics: list[Diagnostic]
    incomplete: int
    kernels: int
    without_shapes: int
    budget_cut: int


def new_run() -> None:
    """Forget what this process checked and read for an earlier run (a test session runs many)."""
    _held.clear()
    _logs.clear()


def folder() -> Path:
    return user_cache.cache_dir() / "results"


def tool_digest() -> str:
    """The content of wgmma-lsp's own files (code, rule docs, bundled data, the catalog): a
    changed checker never reads an old result, and the same checker installed again (a CI job
    restoring its cache folder) reads its results. Their stamps are cheap to read, their bytes
    are not: the digest of the bytes is kept by the digest of the stamps (`tool-*.txt`)."""
    global _tool
    if _tool is None:
        files = [p for root in (_PACKAGE, _PACKAGE.parent / "docs" / "mosaic-gpu-errors.tsv")
                 for p in sorted(_files(root))]
        stamps = blake2b(digest_size=16)
        for path in files:
            stamp = observed.file_stamp(path)
            stamps.update(f"{path}\0{stamp}\n".encode("utf-8", "surrogatepass"))
        memo = folder() / f"tool-{stamps.hexdigest()}.txt"
        _held_names.add(memo.name)
        try:
            _tool = memo.read_text(encoding="ascii").strip() or None
        except (OSError, ValueError):
            _tool = None
        if _tool is None or len(_tool) != 32:
            content = blake2b(digest_size=16)
            for path in files:
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    data = b"\0unreadable"
                rel = os.path.relpath(path, _PACKAGE.parent)
                content.update(f"{rel}\0{len(data)}\0".encode("utf-8", "surrogatepass") + data)
            _tool = content.hexdigest()
            _write_atomically(memo, _tool)
    return _tool


def _write_atomically(path: Path, text: str) -> bool:
    """Write `text` to a temporary file renamed over `path` (readers see the old or the new
    whole); False, with a log line, when the folder cannot be written."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        return True
    except OSError as e:
        log.info("result cache %s cannot be written (%s): only the speed is lost", path, e)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def _files(root: Path) -> list[str]:
    if root.is_file():
        return [str(root)]
    out = []
    for folder_, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [os.path.join(folder_, n) for n in names if not n.endswith((".pyc", ".pyo"))]
    return out


def _settings_key(s: Settings) -> dict:
    return {"select": list(s.select), "ignore": list(s.ignore),
            "severity": {k: int(v) for k, v in sorted(s.severity.items())}, "off": sorted(s.off),
            "docs": s.docs_base_url, "lowering": s.lowering_semantics, "sweeps": s.sweeps,
            "python": s.python}


def run_key(settings: Settings) -> str:
    from wgmma_lsp.environment import active

    env = active()
    key = {"format": FORMAT, "tool": tool_digest(), "package": str(_PACKAGE), "python": sys.version, "executable": sys.executable,
           "sys_path": sys.path, "env": {v: os.environ.get(v) for v in ENV_VARS}, "cwd": os.getcwd(),
           "jax": [str(env.prefix), str(env.jax_root), env.jax_version],
           "settings": _settings_key(settings)}
    return blake2b(json.dumps(key, sort_keys=True).encode("utf-8", "surrogatepass"),
                   digest_size=16).hexdigest()


def text_digest(text: str) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def log_path(log_id: str) -> Path:
    return folder() / "logs" / f"{log_id}.jsonl"


def entry_path(path: str) -> Path:
    name = blake2b(os.path.abspath(path).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return folder() / f"{name}.json"


# -- reading -------------------------------------------------------------------------------
def load(path: str, text: str, settings: Settings,
         api: Callable[[str, str, str], bool]) -> Cached | None:
    """The cached result of checking `path` (whose text is `text`), or None. `api(path, module,
    name)` answers the pre-filter's question as this run would."""
    entry = entry_path(path)
    try:
        raw = entry.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("result cache %s cannot be read (%s): checking %s again", entry, e, path)
        return None
    try:
        data = json.loads(raw)
        if data["path"] != os.path.abspath(path) or data["key"] != run_key(settings) \
                or data["text"] != text_digest(text):
            return None
        seen = _log(str(data["log"]))
        if seen is None or len(seen) < int(data["length"]):
            return None  # its log was removed (or cut short): analyse again
        for kind, where, fact in seen[:int(data["length"])]:
            if not _holds(kind, where, fact, api):
                return None
        r = data["result"]
        return Cached([_diagnostic(d) for d in r["diagnostics"]], int(r["incomplete"]),
                      int(r["kernels"]), int(r["without_shapes"]), int(r["budget_cut"]))
    except (ValueError, KeyError, TypeError, IndexError) as e:
        log.warning("result cache %s is corrupt (%s: %s): checking %s again", entry, type(e).__name__, e, path)
        return None


def _log(log_id: str) -> list | None:
    """The observations a process logged (each line: [kind, where, what was seen])."""
    if log_id not in _logs:
        if not log_id.replace("-", "").isalnum():
            raise ValueError(f"not a log id: {log_id!r}")
        try:
            with open(log_path(log_id), encoding="utf-8") as f:
                _logs[log_id] = [json.loads(line) for line in f if line.endswith("\n")]
        except FileNotFoundError:
            _logs[log_id] = None
    return _logs[log_id]


def _holds(kind: str, where: str, seen: object, api: Callable[[str, str, str], bool]) -> bool:
    key = (kind, where)
    held = _held.get(key)
    if held is None:
        if kind == API:
            path, module, name = where.split("\0")
            held = api(path, module, name) == seen
        elif kind == JEDI:
            from wgmma_lsp.interpret import jedi_resolve  # jedi: only to validate its answers

            held = jedi_resolve.still_found(where, seen)  # type: ignore[arg-type]
        else:
            held = observed.still_true(kind, where, seen)
        _held[key] = held
    return held


def _span(v: list) -> Span:
    return Span(int(v[0]), int(v[1]), int(v[2]), int(v[3]))


def _diagnostic(d: dict) -> Diagnostic:
    return Diagnostic(
        code=d["code"], name=d["name"], message=d["message"], span=_span(d["span"]),
        severity=Severity(d["severity"]), source=d["source"], doc_uri=d["doc_uri"],
        related=[RelatedInfo(_span(r["span"]), r["message"], r["uri"]) for r in d["related"]],
        fixes=[Fix(f["title"], tuple(TextEdit(_span(e["span"]), e["new_text"]) for e in f["edits"]),
                   bool(f["preferred"])) for f in d["fixes"]])


# -- writing -------------------------------------------------------------------------------
def _diagnostic_json(d: Diagnostic) -> dict:
    return {"code": d.code, "name": d.name, "message": d.message, "span": list(d.span),
            "severity": int(d.severity), "source": d.source, "doc_uri": d.doc_uri,
            "related": [{"span": list(r.span), "message": r.message, "uri": r.uri} for r in d.related],
            "fixes": [{"title": f.title, "preferred": f.preferred,
                       "edits": [{"span": list(e.span), "new_text": e.new_text} for e in f.edits]}
                      for f in d.fixes]}


def store(path: str, text: str, settings: Settings, result: Cached) -> bool:
    """Keep the result of an analysis that just ran in this process (with what it observed).
    False when the folder cannot be written."""
    global _writing
    seen = observed.snapshot()
    if _writing is None or _writing[0] != os.getpid():  # a new process (a forked worker)
        _writing = (os.getpid(), f"{os.getpid()}-{os.urandom(6).hex()}", 0)
    pid, log_id, written = _writing
    try:
        log_path(log_id).parent.mkdir(parents=True, exist_ok=True)
        with open(log_path(log_id), "a", encoding="utf-8") as f:
            f.writelines(json.dumps([k, p, _fact(k, p, v)]) + "\n" for k, p, v in seen[written:])
    except OSError as e:
        log.info("result cache log %s cannot be written (%s): only the speed is lost", log_path(log_id), e)
        _writing = None
        return False
    _writing = (pid, log_id, len(seen))
    data = {"path": os.path.abspath(path), "key": run_key(settings), "text": text_digest(text),
            "log": log_id, "length": len(seen),
            "result": {"diagnostics": [_diagnostic_json(d) for d in result.diagnostics],
                       "incomplete": result.incomplete, "kernels": result.kernels,
                       "without_shapes": result.without_shapes, "budget_cut": result.budget_cut}}
    return _write_atomically(entry_path(path), json.dumps(data, separators=(",", ":")))


def _fact(kind: str, path: str, seen: object) -> object:
    """An observation as the log keeps it: a file's stamp with the digest of its bytes."""
    if kind == "f" and isinstance(seen, tuple):
        return [*seen, observed.content_digest(path, seen)]
    return list(seen) if isinstance(seen, tuple) else seen


def collect_garbage(max_entries: int = MAX_ENTRIES) -> int:
    """Delete the entries beyond `max_entries` (the least recently written first), then the logs
    no entry refers to (older than STALE_LOG_SECONDS: a concurrent run may still be writing a
    younger one); returns how many logs went."""
    import time

    logs = folder() / "logs"
    try:
        names = os.listdir(logs)
        entries = [n for n in os.listdir(folder()) if n.endswith(".json")]
    except OSError:
        return 0
    if len(entries) > max_entries:
        dated = []
        for name in entries:
            try:
                dated.append((os.stat(folder() / name).st_mtime, name))
            except OSError:
                continue
        dated.sort()
        for _, name in dated[:len(dated) - max_entries]:
            try:
                os.unlink(folder() / name)
            except OSError:
                continue
        entries = [name for _, name in dated[len(dated) - max_entries:]]
    used = set()
    for name in entries:
        try:
            with open(folder() / name, encoding="utf-8") as f:
                used.add(str(json.load(f).get("log")))
        except (OSError, ValueError, AttributeError):
            continue
    removed = 0
    now = time.time()
    try:
        memos = [n for n in os.listdir(folder()) if n.startswith("tool-") and n not in _held_names]
    except OSError:
        memos = []
    for name in memos:  # the digests of other installs (or edits) of wgmma-lsp
        try:
            if now - os.stat(folder() / name).st_mtime > STALE_LOG_SECONDS:
                os.unlink(folder() / name)
        except OSError:
            continue
    for name in names:
        p = logs / name
        if name.endswith(".jsonl") and name[:-6] not in used:
            try:
                if now - p.stat().st_mtime > STALE_LOG_SECONDS:
                    p.unlink()
                    removed += 1
            except OSError:
                continue
    return removed

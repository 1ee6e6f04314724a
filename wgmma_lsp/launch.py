"""The process entry points (`wgmma-lsp`, `python -m wgmma_lsp`): nothing from the workspace is imported.

Editors start the server with the workspace as its working directory, and `python -m` puts that
directory first on `sys.path`: a workspace holding a `json.py`, `logging.py` or `pygls.py` would be
imported — executed — by the server's own `import json`. So before anything else is imported the
launcher takes off `sys.path` what Python put there on the command line's behalf (the working
directory, `''`, the script's folder) and sets `PYTHONSAFEPATH=1` for every process started from
this one (jedi's helper, multiprocessing's `spawn` children — which would otherwise run `python -c`
with `''` on their path, in the same working directory). See docs/security.md.

This module imports only `os` and `sys`, which the interpreter has loaded before any user path is
consulted. `cli.main` is left as it was, so tests may call it in-process without losing their paths.
Once the path is clean, a `check` first asks this environment's check daemon, if one runs
(daemon_client.py: one `stat` when none does); `daemon serve` becomes the daemon (daemon.py).
"""

from __future__ import annotations

import os
import sys


def _same_dir(entry: str, directory: str) -> bool:
    try:
        return os.path.realpath(entry or os.curdir) == os.path.realpath(directory)
    except (OSError, ValueError):  # an unreadable or malformed entry is not the directory
        return False


def isolate_sys_path(script_dir: str | None = None) -> list[str]:
    """Remove the working directory, `''` and `script_dir` from `sys.path`; returns what was removed.
    Sets `PYTHONSAFEPATH=1` so that child Pythons never add their own (Python >= 3.11)."""
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed: nothing of it can be imported anyway
        cwd = None
    removed: list[str] = []
    kept: list[str] = []
    for entry in sys.path:
        if entry in ("", os.curdir) or (cwd is not None and _same_dir(entry, cwd)) \
                or (script_dir is not None and _same_dir(entry, script_dir)):
            removed.append(entry)
        else:
            kept.append(entry)
    sys.path[:] = kept
    return removed


def main() -> int:
    """The console script `wgmma-lsp` (and `python -m wgmma_lsp`, through __main__)."""
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else None
    isolate_sys_path(os.path.dirname(os.path.abspath(script)) if script else None)
    if sys.argv[1:2] == ["check"]:  # a check daemon of this environment, if one runs (daemon.py)
        from wgmma_lsp import daemon_client

        if daemon_client.wanted(sys.argv):
            rc = daemon_client.try_check(sys.argv)
            if rc is not None:
                return rc
    import gc

    from wgmma_lsp.gc_tuning import THRESHOLDS

    # Start-up allocates ~300 modules' objects and frees few: with the default threshold (700)
    # the collector walked that growing heap about a hundred times. As the server and `check`
    # set it once running (server.configure_gc, batch.configure_gc), from the start.
    gc.set_threshold(*THRESHOLDS)
    serving = sys.argv[1:3] == ["daemon", "serve"]
    if sys.argv[1:2] == ["check"] or serving:  # (the daemon's forks run checks)
        defer_inspect()
    from wgmma_lsp import codegen_cache  # before any dataclass is made: their code, cached

    codegen_cache.install()
    if serving:
        from wgmma_lsp import daemon

        return daemon.main(sys.argv[3:])
    from wgmma_lsp import cli  # only now: cli imports argparse, pathlib, ...

    rc = cli.main()
    if cli.ends_without_teardown:
        exit_now(rc)
    return rc


class _DeferredModule(type(sys)):  # (types.ModuleType: nothing more imported here)
    """A module whose code runs when an attribute it does not have yet is first looked up."""

    def __getattr__(self, name: str):
        self.__class__ = type(sys)  # (before running: a look-up meanwhile is a plain one)
        self.__spec__.loader.exec_module(self)
        return getattr(self, name)


def defer_inspect() -> bool:
    """`inspect` is imported for `dataclasses` with its code not run yet: run at the first look-up
    of one of its functions. `dataclasses` imports it (with `dis`, `opcode`, `linecache`: ~3 ms of
    a one-file `check` at Python 3.11, ~3.5 ms at 3.12) for `inspect.signature`, called only for a
    class without a docstring — wgmma-lsp's all have one — and, at Python 3.12, for
    `inspect.get_annotations(cls)`, called for every class: there `dataclasses` is given its own
    `inspect` (`_DataclassesInspect`) that answers that call as `inspect` does, without running
    `inspect`, and hands every other look-up to the deferred module. (`importlib.util.LazyLoader`
    would not do: its module runs at any attribute look-up, and `import inspect` looks up
    `__spec__`.) Only for `check`, before any thread: the server's threads get the plain import.
    Returns whether `inspect` was deferred."""
    if sys.version_info >= (3, 13) or "inspect" in sys.modules:
        return False
    from importlib.util import find_spec, module_from_spec

    spec = find_spec("inspect")
    if spec is None or spec.loader is None:
        return False
    module = module_from_spec(spec)
    module.__class__ = _DeferredModule
    sys.modules["inspect"] = module
    if sys.version_info >= (3, 12):
        import dataclasses

        dataclasses.inspect = _DataclassesInspect(module)  # type: ignore[attr-defined]
    return True


class _DataclassesInspect:
    """`inspect` as Python 3.12's `dataclasses` sees it (`defer_inspect`): `get_annotations` of a
    class, with no string evaluated, answered as `inspect.get_annotations` answers it (the class's
    own `__annotations__`, copied; `{}` without them); every other call and look-up goes to the
    module itself, run then."""

    def __init__(self, module) -> None:
        self._module = module

    def get_annotations(self, obj, *, globals=None, locals=None, eval_str=False):
        if not isinstance(obj, type) or eval_str:
            return self._module.get_annotations(obj, globals=globals, locals=locals,
                                                eval_str=eval_str)
        # inspect.get_annotations, for a class with eval_str false (its globals and locals are
        # only used to evaluate strings).
        obj_dict = getattr(obj, "__dict__", None)
        if obj_dict and hasattr(obj_dict, "get"):
            ann = obj_dict.get("__annotations__", None)
            if isinstance(ann, _GETSET_DESCRIPTOR):
                ann = None
        else:
            ann = None
        if ann is None:
            return {}
        if not isinstance(ann, dict):
            raise ValueError(f"{obj!r}.__annotations__ is neither a dict nor None")
        if not ann:
            return {}
        return dict(ann)

    def __getattr__(self, name: str):
        return getattr(self._module, name)


_GETSET_DESCRIPTOR = type(type(lambda: None).__code__)  # types.GetSetDescriptorType


def exit_now(rc: int) -> None:
    """End a finished `check` without Python's teardown: freeing every module and a last full
    collection of the heap the analysis left, 10-15 ms of a one-file check that has nothing left
    to do. What the teardown does that counts is done first: the exit handlers (the caches'
    writes, logging's flush, multiprocessing's clean-up) and the flush of stdout and stderr
    (process_end.finish). Not while another thread runs, nor when the flush fails (a closed
    pipe): the usual exit then."""
    import threading

    from wgmma_lsp.process_end import finish

    if threading.active_count() != 1:
        return
    if not finish():  # the reader left, or a stream is closed: Python's own exit
        return
    os._exit(rc)

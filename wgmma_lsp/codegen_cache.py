"""The code `dataclasses` generates, kept on disk: a process start without compiling it again.

Creating a dataclass compiles the source of the methods it generates (`__init__`, `__repr__`,
`__eq__`, `__hash__`, a frozen class's `__setattr__`...): Python 3.11 and 3.12 `exec` one string
per method, about 450 for wgmma-lsp's ~95 dataclasses — 40-70 ms of CPU in every process that
imports the analysis, a third of a one-file `wgmma-lsp check`. Compiling the same text always
gives the same code, so the code is kept keyed by the text itself: a class whose fields change
generates another text, which is compiled and added. Nothing else changes — the functions are
still made by `dataclasses`, from its own text, with its own globals and locals.

How: `dataclasses` calls `exec(text, globals, locals)`, and looks `exec` up in its own module
first; `install()` puts a caching `exec` there (for this process; the entry points call it — the
CLI and the server — never a library import of wgmma_lsp). `compile(text, "<string>", "exec",
dont_inherit=True)` is what `exec` of a string does from `dataclasses`, a module without
`from __future__` imports. A Python whose `dataclasses` works otherwise only loses the speed.

The file: `dataclass-code-<bytecode magic>.marshal` in the user cache directory
(`user_cache.cache_dir()`), written atomically at exit when something was compiled, merged with
what another process wrote meanwhile. It holds code, which is run: like a `.pyc` it is trusted
only when this user owns it and nobody else can write it or its folder; a file that cannot be
read, is not this user's or does not parse is ignored with a log line (and replaced).
"""

from __future__ import annotations

import builtins
import marshal
import os
import stat
from importlib.util import MAGIC_NUMBER

from wgmma_lsp import logs
from wgmma_lsp.user_cache import cache_dir

log = logs.logger()

#: More entries than this (code that changed many times since the file was started): the file
#: is rewritten with what this process used, and what it compiled. Every process reads the whole
#: file at its start: importing every module of the package makes 552 entries (~0.6 MB), a
#: one-file `check` about 450; 4,096 entries of old code (3.8 MB, a machine running many
#: checkouts) cost each start ~25 ms of `marshal.loads` at Python 3.12, 1,024 at most ~8 ms.
MAX_ENTRIES = 1024

_code: dict[str, object] = {}  # text -> code, read from the file, then compiled here
_used: set[str] = set()
_compiled = 0
_installed = False


def cache_path() -> str:
    return os.path.join(str(cache_dir()), f"dataclass-code-{MAGIC_NUMBER.hex()}.marshal")


def _trusted(st: os.stat_result) -> bool:
    """Owned by this user, and writable by nobody else (POSIX; elsewhere: trusted as `.pyc`s are)."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not (_trusted(st) and _trusted(os.stat(os.path.dirname(path)))):
                log.warning("dataclass code cache %s is not this user's alone: ignored", path)
                return {}
            data = marshal.loads(f.read())
    except FileNotFoundError:
        return {}
    except (OSError, EOFError, ValueError, TypeError) as e:
        log.warning("dataclass code cache %s cannot be read and was ignored (%s: %s)", path,
                    type(e).__name__, e)
        return {}
    if not isinstance(data, dict) or not all(
            isinstance(k, str) and type(v) is type(_read.__code__) for k, v in data.items()):
        log.warning("dataclass code cache %s holds something else: ignored", path)
        return {}
    return data


def _exec(source, globals=None, locals=None, /, **kwargs):
    """`exec`, with the code of a source text compiled once per Python version, not per process."""
    global _compiled
    if type(source) is not str or kwargs:
        return builtins.exec(source, globals, locals, **kwargs)
    code = _code.get(source)
    if code is None:
        code = _code[source] = compile(source, "<string>", "exec", dont_inherit=True)
        _compiled += 1
    _used.add(source)
    return builtins.exec(code, globals, locals)


def install() -> bool:
    """Cache the code of every dataclass created from now on in this process; once. Returns
    whether `dataclasses` could be hooked (it calls a global `exec`)."""
    global _installed
    if _installed:
        return True
    import atexit
    import dataclasses

    if not hasattr(dataclasses, "_create_fn") and not hasattr(dataclasses, "_FuncBuilder"):
        return False  # a dataclasses this hook was not written for: no cache
    _code.update(_read(cache_path()))
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(_save)
    _installed = True
    return True


def uninstall() -> None:
    """Back to the built-in `exec` (tests); the code compiled so far is saved first."""
    global _installed
    import dataclasses

    _save()
    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    _installed = False


def save() -> None:
    """Write now what this process compiled (the check daemon, after its imports: the checks it
    forks then have nothing of it left to write at their exit)."""
    _save()


def _save() -> None:
    """Write the file when this process compiled something (atomically; merged with the file as it
    is now, another process may have written it)."""
    global _compiled
    if not _compiled:
        return
    path = cache_path()
    merged = {**_read(path), **_code}
    if len(merged) > MAX_ENTRIES:
        merged = {k: v for k, v in _code.items() if k in _used}
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(marshal.dumps(merged))
        os.replace(tmp, path)
        _compiled = 0
    except OSError as e:  # a cache directory that cannot be written costs only the speed
        log.info("dataclass code not cached in %s: %s", os.path.dirname(path), e)
        try:
            os.unlink(tmp)
        except OSError as cleanup:
            log.debug("could not remove %s: %s", tmp, cleanup)


def stats() -> dict[str, int]:
    """What this process read, used and compiled (tests, benchmarks)."""
    return {"known": len(_code), "used": len(_used), "compiled": _compiled,
            "installed": int(_installed)}


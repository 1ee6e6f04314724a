"""The trace-mode subprocess: runs the user's module and asks JAX for its verdict.

This file is run as a *script* by the user's interpreter (`python worker.py`), so it must not
import `wgmma_lsp` (which may not be installed there) and must only use the standard library
plus JAX. The language server never imports it.

Protocol. The request is one JSON object on stdin:

    {"path": "/abs/kernel.py", "source": "...", "entries": [{"id": 0, "call": "...",
     "expression": "..."}], "lower": true, "memory_mb": 4096, "dump_after": 54.0,
     "hard_deadline": 70.0, "parent_pid": 1234 | null}

Events are JSON objects, one per line, on the *original* stdout (fd 1 is redirected to stderr
before user code runs, so a `print` in the user's module cannot corrupt the protocol):

    {"event": "hello", "jax": "0.10.2", "python": "3.11.9"}
    {"event": "stage", "stage": "import" | "entry", "id": 0}
    {"event": "import", "error": ERROR | null}
    {"event": "entry", "id": 0, "stage": "ok" | "entry" | "trace" | "lower",
     "lowered": bool, "error": ERROR | null, "avals": [AVAL, ...]}
    {"event": "done"}

ERROR = {"type", "message", "blame": [line, col, end_line, end_col] | null (0-based, in the
user's file), "origin": "user-frame" | "mlir-location" | "none", "jax_frame": "file:line" | null,
"memory": bool}. AVAL = {"span": [line, col, end_line, end_col], "primitive", "avals": [str]}.
"""

from __future__ import annotations

import ast
import faulthandler
import json
import os
import re
import sys
import traceback
from typing import Any, Iterator

_OUT: Any = None  # the protocol stream (a dup of the original stdout)
MAX_MESSAGE = 4000
MAX_AVALS = 20000


def emit(obj: dict) -> None:
    """Write one protocol event."""
    _OUT.write(json.dumps(obj) + "\n")
    _OUT.flush()


def isolate_stdout() -> None:
    """Keep fd 1 for the protocol; everything else the process prints goes to stderr."""
    global _OUT
    fd = os.dup(1)
    os.dup2(2, 1)
    _OUT = os.fdopen(fd, "w", encoding="utf-8")
    sys.stdout = sys.stderr


def limit_memory(memory_mb: int) -> None:
    """Cap the data segment (heap and private anonymous mappings) of this process.

    RLIMIT_AS would also count the large virtual reservations JAX and glibc make without
    using them, so RLIMIT_DATA is the limit that tracks real use.
    """
    try:
        import resource
    except ImportError:  # not POSIX: the server's RSS watchdog still applies
        return
    limit = int(memory_mb) * 2**20
    rlim = getattr(resource, "RLIMIT_DATA", None) or getattr(resource, "RLIMIT_AS", None)
    if rlim is None:
        return
    try:
        _soft, hard = resource.getrlimit(rlim)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(rlim, (limit, hard))
    except (ValueError, OSError):
        pass


# -- blame ---------------------------------------------------------------------------------

def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
    except (OSError, ValueError):
        return a == b


class Blamer:
    """Finds the line of the user's file that an exception (or an equation) points at."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._cache: dict[str, bool] = {}

    def is_user(self, filename: str) -> bool:
        hit = self._cache.get(filename)
        if hit is None:
            hit = self._cache[filename] = _same_file(filename, self.path)
        return hit

    def last_user_frame(self, tb: Any) -> list[int] | None:
        """The innermost frame of a traceback that lies in the user's file, as a 0-based span."""
        found = None
        for fs in traceback.extract_tb(tb):
            if self.is_user(fs.filename) and fs.lineno:
                line = fs.lineno - 1
                end_line = (getattr(fs, "end_lineno", None) or fs.lineno) - 1
                col = getattr(fs, "colno", None)
                end_col = getattr(fs, "end_colno", None)
                if col is None or end_col is None or end_line != line:
                    col, end_col, end_line = None, None, line
                found = [line, col, end_line, end_col]
        return found

    def mlir_location(self, text: str) -> list[int] | None:
        """The first `"file":line:col to :col` location naming the user's file in MLIR text."""
        for m in _MLIR_LOC.finditer(text):
            if self.is_user(m.group("file")):
                line = int(m.group("line")) - 1
                col = int(m.group("col"))
                end = m.group("end_col")
                end_line = int(m.group("end_line")) - 1 if m.group("end_line") else line
                return [line, col, end_line, int(end) if end else None]
        return None


_MLIR_LOC = re.compile(
    r'"(?P<file>[^"]+)":(?P<line>\d+):(?P<col>\d+)(?: to (?:(?P<end_line>\d+):)?:?(?P<end_col>\d+))?')


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or (None if cur.__suppress_context__ else cur.__context__)


def _mlir_message(text: str) -> str | None:
    """`'mosaic_gpu.wgmma' op ...` from `Verification failed:\\nerror: <loc>: <message>`."""
    for ln in text.splitlines():
        ln = ln.strip()
        if ln.startswith("error:"):
            rest = ln[len("error:"):].strip()
            # the location is a balanced run of parentheses/quotes before ": "
            depth, quoted = 0, False
            for i, ch in enumerate(rest):
                if ch == '"':
                    quoted = not quoted
                elif not quoted and ch == "(":
                    depth += 1
                elif not quoted and ch == ")":
                    depth -= 1
                elif not quoted and depth == 0 and rest.startswith(": ", i):
                    return rest[i + 2:].strip()
            return rest
    return None


_VERIFICATION_PREFIX = "Pallas encountered an internal verification error."


def jax_limitation(exc: BaseException) -> str | None:
    """Failures of JAX's own machinery on this machine, not verdicts on the kernel:
    "no-lowering-rule" — JAX registered no lowering for the pallas_call's compiler params (JAX
    0.12 lowers Mosaic GPU kernels only through `plgpu.kernel`: a bare `assert rule is not None`);
    "no-device" — the backend JAX picked (Triton, for a `pl.pallas_call` without Mosaic GPU
    params in 0.12) needs a real GPU to lower."""
    if str(exc).startswith("No supported GPU devices found"):
        return "no-device"
    if isinstance(exc, AssertionError) and not str(exc):
        tb = traceback.extract_tb(exc.__traceback__)
        if tb and tb[-1].filename.replace("\\", "/").endswith("pallas/pallas_call.py") \
                and "rule is not None" in (tb[-1].line or ""):
            return "no-lowering-rule"
    return None


def describe_error(exc: BaseException, blamer: Blamer) -> dict:
    """An exception as the protocol's ERROR object: JAX's message and the blamed user line."""
    text = str(exc)
    is_mlir = type(exc).__name__ == "MLIRError" or text.startswith("Verification failed")
    message = (_mlir_message(text) if is_mlir else None) or text.strip()
    if type(exc).__name__ == "VerificationError" and text.startswith(_VERIFICATION_PREFIX) \
            and "Error details: " in text:
        # JAX 0.12 re-raises MLIR verifier errors with a preamble and the failing op appended
        details = text.split("Error details: ", 1)[1]
        message = details.split("\n see current operation", 1)[0].strip() or message
    jax_frame = None
    own = traceback.extract_tb(exc.__traceback__)
    if own:
        last = own[-1]
        jax_frame = f"{last.filename}:{last.lineno}"
        if not message:  # bare `assert` / `raise NotImplementedError`
            code = (last.line or "").strip()
            message = (f"{type(exc).__name__} with no message, raised at "
                       f"{_short(last.filename)}:{last.lineno}" + (f": `{code}`" if code else ""))
    if isinstance(exc, SyntaxError) and blamer.is_user(exc.filename or ""):
        line = (exc.lineno or 1) - 1
        col = max((exc.offset or 1) - 1, 0)
        return _error(exc, exc.msg or message, [line, col, line, None], "user-frame", jax_frame)
    blame, origin = None, "none"
    chain = list(_chain(exc))
    for e in chain:  # MLIR verifier errors: the location in the text
        loc = blamer.mlir_location(str(e)) if "Verification failed" in str(e) or e is exc and is_mlir else None
        if loc:
            blame, origin = loc, "mlir-location"
            break
    if blame is None:  # lowering errors: the stack captured before transformation
        for e in chain:
            if type(e).__name__ == "JaxStackTraceBeforeTransformation":
                blame = blamer.last_user_frame(e.__traceback__)
                if blame:
                    origin = "user-frame"
                    break
    if blame is None:  # trace errors: raised inside the user's frames
        for e in chain:
            blame = blamer.last_user_frame(e.__traceback__)
            if blame:
                origin = "user-frame"
                break
    return _error(exc, message, blame, origin, jax_frame)


def _short(filename: str) -> str:
    parts = filename.replace("\\", "/").split("/")
    for anchor in ("jax", "jaxlib"):
        if anchor in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(anchor):])
    return filename


def _error(exc: BaseException, message: str, blame: list | None, origin: str,
           jax_frame: str | None) -> dict:
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + " …"
    return {"type": type(exc).__name__, "message": message, "blame": blame, "origin": origin,
            "jax_frame": jax_frame, "memory": isinstance(exc, MemoryError),
            "limitation": jax_limitation(exc)}


# -- avals ---------------------------------------------------------------------------------

def _sub_jaxprs(value: Any) -> Iterator[Any]:
    if hasattr(value, "eqns") and hasattr(value, "invars"):
        yield value
    elif hasattr(value, "jaxpr") and hasattr(getattr(value, "jaxpr"), "eqns"):
        yield value.jaxpr
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _sub_jaxprs(v)


def _frame_converter() -> Any:
    try:
        from jax._src import source_info_util  # private; optional
        return source_info_util.raw_frame_to_frame
    except Exception:
        return None


def eqn_span(eqn: Any, blamer: Blamer, to_frame: Any) -> list | None:
    """The innermost user-file frame of an equation's source info, as a 0-based span."""
    tb = getattr(getattr(eqn, "source_info", None), "traceback", None)
    if tb is None:
        return None
    try:
        if to_frame is not None and hasattr(tb, "raw_frames"):
            codes, lastis = tb.raw_frames()
            for code, lasti in zip(codes, lastis):  # innermost first
                if blamer.is_user(code.co_filename):
                    f = to_frame(code, lasti)
                    if f.start_line == f.end_line and f.start_column >= 0 and f.end_column >= 0:
                        return [f.start_line - 1, f.start_column, f.end_line - 1, f.end_column]
                    return [f.start_line - 1, None, f.start_line - 1, None]
            return None
        for fr in tb.frames:  # public fallback: lines only, innermost first
            if blamer.is_user(fr.file_name):
                return [fr.line_num - 1, None, fr.line_num - 1, None]
    except Exception:
        return None
    return None


def collect_avals(jaxpr: Any, blamer: Blamer) -> list[dict]:
    """Every equation (at any depth) that the user's file bound, with its output avals."""
    to_frame = _frame_converter()
    out: list[dict] = []
    stack = [jaxpr]
    seen: set[int] = set()
    while stack and len(out) < MAX_AVALS:
        j = stack.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for eqn in j.eqns:
            span = eqn_span(eqn, blamer, to_frame)
            if span is not None:
                out.append({"span": span, "primitive": str(eqn.primitive),
                            "avals": [str(v.aval) for v in eqn.outvars]})
            for v in eqn.params.values():
                stack.extend(_sub_jaxprs(v))
    return out


# -- running -------------------------------------------------------------------------------

def module_name(path: str) -> tuple[str, str]:
    """The module's dotted name and the folder to import it from.

    A file inside packages (folders with `__init__.py`) gets its full dotted name, so that its
    relative imports work; the folder above the outermost package goes on `sys.path`.
    """
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        name = os.path.basename(folder)
        if not name.isidentifier():
            break
        parts.insert(0, name)
        folder = os.path.dirname(folder)
    if not all(p.isidentifier() for p in parts):
        return "wgmma_trace_module", os.path.dirname(os.path.abspath(path))
    return ".".join(parts), folder


def run_module(path: str, source: str) -> dict:
    """Execute the user's module (under its own name, never `__main__`) and return its namespace."""
    import types

    name, root = module_name(path)
    for folder in {os.path.dirname(os.path.abspath(path)), root}:
        if folder not in sys.path:
            sys.path.insert(0, folder)
    if name in sys.modules:  # a file named like a module already loaded (json.py, ...)
        name = "wgmma_trace_" + name.replace(".", "_")
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0]
    sys.modules[name] = module
    code = compile(source, path, "exec", dont_inherit=True)
    exec(code, module.__dict__)
    return module.__dict__


def split_call(expression: str) -> ast.Call:
    tree = ast.parse(expression.strip(), mode="eval")
    if not isinstance(tree.body, ast.Call):
        raise ValueError("an entry point must be a call, such as `matmul(bf16[256,256], bf16[256,512])`")
    return tree.body


def _eval(node: ast.AST, namespace: dict) -> Any:
    expr = ast.Expression(body=node)
    ast.fix_missing_locations(expr)
    return eval(compile(expr, "<wgmma-lsp entry point>", "eval"), namespace)


def _is_array_spec(value: Any, jax: Any) -> bool:
    leaves = jax.tree_util.tree_leaves(value)
    return bool(leaves) and all(
        isinstance(x, jax.ShapeDtypeStruct) or hasattr(x, "shape") and hasattr(x, "dtype")
        for x in leaves)


def trace_entry(entry: dict, namespace: dict, blamer: Blamer, lower: bool) -> dict:
    """Trace (and lower for CUDA) one entry point; never raises."""
    import jax

    result: dict = {"event": "entry", "id": entry["id"], "stage": "entry", "lowered": False,
                    "error": None, "avals": []}
    try:
        call = split_call(entry["expression"])
        fn = _eval(call.func, namespace)
        args = [_eval(a, namespace) for a in call.args]
        kwargs = {k.arg: _eval(k.value, namespace) for k in call.keywords if k.arg}
    except BaseException as e:  # noqa: BLE001 - the user's expression may raise anything
        if isinstance(e, KeyboardInterrupt):
            raise
        result["error"] = describe_error(e, blamer)
        return result
    dyn_pos = [i for i, a in enumerate(args) if _is_array_spec(a, jax)]
    dyn_kw = [k for k, v in kwargs.items() if _is_array_spec(v, jax)]

    def wrapped(pos: list, kw: dict) -> Any:
        full = list(args)
        for i, v in zip(dyn_pos, pos):
            full[i] = v
        return fn(*full, **{**kwargs, **kw})

    dyn_args = ([args[i] for i in dyn_pos], {k: kwargs[k] for k in dyn_kw})
    result["stage"] = "trace"
    try:
        jitted = jax.jit(wrapped)
        if hasattr(jitted, "trace"):
            traced = jitted.trace(*dyn_args)
            jaxpr = traced.jaxpr
        else:  # older JAX
            traced = None
            jaxpr = jax.make_jaxpr(wrapped)(*dyn_args)
        result["avals"] = collect_avals(getattr(jaxpr, "jaxpr", jaxpr), blamer)
        if not lower or traced is None:
            result["stage"] = "ok"
            return result
        result["stage"] = "lower"
        traced.lower(lowering_platforms=("cuda",))
        result["lowered"] = True
        result["stage"] = "ok"
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        result["error"] = describe_error(e, blamer)
    return result


def watch_parent(hard_deadline: float | None, parent: int | None = None) -> None:
    """Exit if the server that started this process dies, or long after the time limit.

    The server kills the worker's process group at the time limit; this is the backstop for a
    server that died first (the worker must never outlive it, looping forever).
    """
    import threading
    import time

    initial = os.getppid()
    start = time.monotonic()

    def parent_gone() -> bool:
        # `parent`: the pid of the process that started this one directly (None under the
        # supervisor, whose init has the worker die with it; in the trace's PID namespace the
        # server's pid would name some other process): not our parent any more means it died
        # before we looked
        return os.getppid() != initial or (parent is not None and initial != parent)

    def loop() -> None:
        while True:
            if parent_gone() or (hard_deadline and time.monotonic() - start > hard_deadline):
                os._exit(4)
            time.sleep(0.5)

    threading.Thread(target=loop, name="wgmma-lsp-watchdog", daemon=True).start()
    try:
        import resource
        if hard_deadline:  # CPU-bound loops that never release the GIL: SIGXCPU
            cpu = int(hard_deadline) + 1
            _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
            if hard == resource.RLIM_INFINITY or hard > cpu:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
    except (ImportError, ValueError, OSError):
        pass


def main() -> int:
    isolate_stdout()
    request = json.loads(sys.stdin.read())
    sys.stdin.close()
    # The script's own folder holds wgmma_lsp/trace modules: never let them shadow user imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if request.get("memory_mb"):
        limit_memory(int(request["memory_mb"]))
    watch_parent(request.get("hard_deadline"), request.get("parent_pid"))
    if request.get("dump_after"):
        # Just before the time limit, dump the stacks so the runner can say where it hung.
        faulthandler.dump_traceback_later(float(request["dump_after"]), exit=False, file=sys.stderr)
    path = request["path"]
    blamer = Blamer(path)
    try:
        import jax
        jax_version = jax.__version__
    except BaseException as e:  # noqa: BLE001
        emit({"event": "hello", "jax": None, "python": sys.version.split()[0]})
        emit({"event": "import", "error": {"type": type(e).__name__, "blame": None,
              "message": f"cannot import jax in {sys.executable}: {e}", "origin": "none",
              "jax_frame": None, "memory": isinstance(e, MemoryError), "no_jax": True}})
        emit({"event": "done"})
        return 0
    emit({"event": "hello", "jax": jax_version, "python": sys.version.split()[0]})
    emit({"event": "stage", "stage": "import"})
    try:
        namespace = run_module(path, request["source"])
    except BaseException as e:  # noqa: BLE001 - includes SystemExit from the module
        emit({"event": "import", "error": describe_error(e, blamer)})
        emit({"event": "done"})
        return 0
    emit({"event": "import", "error": None})

    def spec(dtype: str, shape: tuple) -> Any:
        import jax.numpy as jnp
        return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dtype))

    namespace["__wgmma_spec__"] = spec
    for entry in request.get("entries", []):
        emit({"event": "stage", "stage": "entry", "id": entry["id"]})
        emit(trace_entry(entry, namespace, blamer, bool(request.get("lower", True))))
    emit({"event": "done"})
    return 0


if __name__ == "__main__":
    status = 3
    try:
        status = main()
    finally:
        faulthandler.cancel_dump_traceback_later()
        sys.stderr.flush()
        os._exit(status)  # skip interpreter teardown (JAX's atexit hooks can be slow)

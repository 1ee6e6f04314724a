"""The real server (`serve_stdio`, its gc settings and all) with one extra request,
`wgmma/memoryProbe`, that answers what the process holds: RSS, Python's traced memory (once
the probe was asked with `trace: <frames>` to start `tracemalloc`), glibc's heap (`mallinfo2`), the collector's counts
and the size of every cache the server keeps. Used by `bench_memory.py`; never by the server.

    python benchmarks/memory_probe.py      # speaks LSP over stdio, like `python -m wgmma_lsp`
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import os
import sys
import time
import tracemalloc
from collections import Counter
from typing import Any

PROBE = "wgmma/memoryProbe"


def rss_kib(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                              "fsmblks", "uordblks", "fordblks", "keepcost")]


def mallinfo() -> dict[str, int]:
    """glibc's view of its heap (bytes): `arena` obtained with brk/mmap for its arenas, `uordblks`
    in use, `fordblks` free but kept, `hblkhd` in large mmapped blocks. {} elsewhere."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _Mallinfo2
    m = fn()
    return {n: int(getattr(m, n)) for n, _ in _Mallinfo2._fields_}


def caches(server: Any | None = None) -> dict[str, int]:
    """The size of every cache and table the analysis and the server keep (entries)."""
    from wgmma_lsp.config import _load as config_load
    from wgmma_lsp.ide import suppressions
    from wgmma_lsp.interpret import dtypes, jax_source, jedi_resolve
    from wgmma_lsp.program import lookup
    from wgmma_lsp.program.program import default_program
    from wgmma_lsp import prefilter

    prog = getattr(server, "program", None) or default_program()
    out = {
        "program.summaries": len(prog._summaries),
        "program.disk": len(prog._disk),
        "program.analysed": len(prog._analysed),
        "jedi.imports": len(jedi_resolve._imports),
        "jedi.docs": len(jedi_resolve._docs),
    }
    for name, fn in (("suppressions.parse", suppressions.parse), ("config", config_load),
                     ("prefilter.roots_of", prefilter._roots_of),
                     ("prefilter.find_absolute", prefilter._find_absolute)):
        out[f"lru.{name}"] = fn.cache_info().currsize
    for mod in (dtypes, jax_source, lookup):
        for attr, fn in vars(mod).items():
            if hasattr(fn, "cache_info"):
                out[f"lru.{mod.__name__.rsplit('.', 1)[-1]}.{attr}"] = fn.cache_info().currsize
    if server is not None:
        out.update({
            "server.entries": len(server.entries),
            "server.generations": len(server.generations),
            "server.running": len(server._running),
            "server.published": len(server._published),
            "server.documents": len(server.workspace.text_documents),
            "protocol.request_futures": len(server.protocol._request_futures),
            "protocol.result_futures": len(getattr(server.protocol, "_result_futures", {})),
        })
        try:
            out["asyncio.tasks"] = len(asyncio.all_tasks())
        except RuntimeError:
            pass
    return out


def probe(server: Any | None = None, types: int = 0) -> dict[str, Any]:
    gc_before = gc.get_count()
    out: dict[str, Any] = {"rss_kib": rss_kib(), "gc_count": list(gc_before),
                           "gc_collections": [s["collections"] for s in gc.get_stats()],
                           "objects_tracked": len(gc.get_objects()), "mallinfo": mallinfo(),
                           "caches": caches(server)}
    if tracemalloc.is_tracing():
        out["traced"] = tracemalloc.get_traced_memory()[0]
    if types:
        counts = Counter(type(o).__name__ for o in gc.get_objects())
        out["types"] = counts.most_common(types)
    return out


_snapshots: dict[str, Any] = {}


def growth(before: Any, after: Any, lines: int = 25, key: str = "traceback") -> list[str]:
    """The allocation sites whose traced bytes grew most between two snapshots."""
    keep = tracemalloc.Filter(False, tracemalloc.__file__)
    stats = after.filter_traces([keep]).compare_to(before.filter_traces([keep]), key)
    out = []
    for st in stats[:lines]:
        frames = [f"{os.path.relpath(f.filename) if 'wgmma' in f.filename else os.path.basename(f.filename)}:{f.lineno}"
                  for f in list(st.traceback)[::-1][:6]]  # most recent call first
        out.append(f"{st.size_diff / 1024:+10.1f} KiB {st.count_diff:+8d} blocks  " + " <- ".join(frames))
    return out


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from wgmma_lsp import server as server_mod

    made = server_mod.create_server

    def create_server() -> Any:
        server = made()

        @server.feature(PROBE)
        def memory_probe(ls: Any, params: Any) -> dict[str, Any]:
            args = params if isinstance(params, dict) else params._asdict() if hasattr(params, "_asdict") else {}
            if args.get("trace") and not tracemalloc.is_tracing():
                tracemalloc.start(int(args["trace"]))  # frames per traceback
            collected = None
            if args.get("collect"):
                t = time.perf_counter()
                found = gc.collect()
                collected = {"objects": found, "ms": (time.perf_counter() - t) * 1000}
            out = probe(ls, types=int(args.get("types", 0)))
            if args.get("trim"):  # what glibc gives back when asked (an experiment, not the server's)
                try:
                    ctypes.CDLL("libc.so.6").malloc_trim(0)
                    out["rss_kib_after_trim"] = rss_kib()
                    out["mallinfo_after_trim"] = mallinfo()
                except (OSError, AttributeError):
                    pass
            if collected is not None:
                out["collected"] = collected
            if tracemalloc.is_tracing() and args.get("snapshot") == "baseline":
                _snapshots["baseline"] = tracemalloc.take_snapshot()
            elif tracemalloc.is_tracing() and args.get("snapshot") == "diff" and "baseline" in _snapshots:
                out["growth"] = growth(_snapshots["baseline"], tracemalloc.take_snapshot(),
                                       int(args.get("lines", 25)))
            return out

        return server

    server_mod.create_server = create_server
    server_mod.serve_stdio()


if __name__ == "__main__":
    main()

"""What each JAX operation adds to a kernel's hazard log (wgmma_lsp/hazards/).

The models that decide JAX's errors stay as they are: this module imports them first, then wraps
them so that each also appends its operation to the log of the kernel
being interpreted:

- `plgpu.kernel(...)(...)` and `pl.pallas_call(...)(...)` open the log around the body and, when
  it has run, report the hazards (`hazards.log.kernel_enter/finished/pop`, `hazards.report`);
- `copy_gmem_to_smem` / `copy_smem_to_gmem` / `barrier_wait` / `barrier_arrive` /
  `commit_smem` / `wait_smem_to_gmem`, and loads and stores through SMEM refs (`ref[...]`,
  `ref[...] = v`, `pl.load`, `plgpu.load`), mirror jax/_src/pallas/mosaic_gpu/interpret/
  gpu_callbacks.py (the functions of the same names, and `_get` / `_swap`);
- the control flow JAX traces once but runs any number of times (a `pl.when` on a traced
  condition, `lax.cond`/`switch`/`while_loop`/`scan`, a `fori_loop` or `pl.loop` not known to run)
  marks its events as possible only (`hazards.log.maybe`);
- what the log cannot see into — `emit_pipeline` (its own copies and barriers), the tcgen05
  operations that arrive on barriers — makes the kernel's log opaque: no hazard is reported.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools

from wgmma_lsp.hazards import log as H
from wgmma_lsp.hazards import unroll, warps
from wgmma_lsp.interpret import loop_steps
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.loop_steps import StepInt
from wgmma_lsp.interpret.values import UNKNOWN, AllocSpec, ArrayVal, Const, RefVal, TupleVal, Value, Wrapped, as_int
from wgmma_lsp.models import array_elementwise, blackwell, pallas, pipelines, refs, tma  # noqa: F401  (first: wrapped here)
from wgmma_lsp.models.arrays import INT32
from wgmma_lsp.models.registry import COMPARE_SITES, GETITEM, MODELS, SETITEM, model
from wgmma_lsp.models.wait_counts import count_rejected

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable


def _smem(ref: Value) -> bool:
    return isinstance(ref, RefVal) and ref.kind == "plain" and ref.root().space == "smem"


def _gmem(ref: Value) -> bool:
    return isinstance(ref, RefVal) and ref.kind == "plain" and ref.root().space in ("gmem", "any")


def _unparsed(node: ast.AST | None) -> str | None:
    return ast.unparse(node) if node is not None else None


def _wrap(name: str, before: Callable[[Call], None] | None = None,
          after: Callable[[Call], None] | None = None) -> None:
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        if before is not None:
            before(call)
        result = inner(call)
        if after is not None:
            after(call)
        return result

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


# -- the kernel -----------------------------------------------------------------------------
def _single_thread(call: Call) -> bool:
    """`pl.pallas_call`: one warpgroup; `plgpu.kernel`: unless `num_threads` may be over 1."""
    wrapped = call.wrapped
    if not isinstance(wrapped, Wrapped):
        return False
    if wrapped.api == "pl.pallas_call":
        return True
    n = wrapped.kwargs.get("num_threads", Const(None))
    return "?" not in wrapped.kwargs and isinstance(n, Const) and n.value in (None, 1)


def _body_end(call: Call) -> tuple[int, tuple[int, str] | None]:
    """(id of the body's `def`, where a statement appended to the body goes: the 0-based line
    after its last statement, or before a final `return`, and the body's indentation)."""
    wrapped = call.wrapped
    func = wrapped.func if isinstance(wrapped, Wrapped) else None
    node = getattr(func, "node", None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
        return 0, None
    last = node.body[-1]
    row = last.lineno - 1 if isinstance(last, ast.Return) else (last.end_lineno or last.lineno)
    return id(node), (row, " " * node.body[0].col_offset)


def _count(v: Value | None) -> int | None:
    """The number of points of a grid / cluster (`(2, 3)`, `()`, absent), when known."""
    if v is None or isinstance(v, Const) and v.value in ((), None):
        return 1
    n = as_int(v)
    if n is not None:
        return n
    if isinstance(v, TupleVal):
        total = 1
        for x in v.items:
            k = as_int(x)
            if k is None:
                return None
            total *= k
        return total
    return None


def _instances(call: Call, log: H.KernelLog) -> None:
    """`plgpu.kernel(..., grid=, cluster=, num_threads=, thread_name=)`: how many threads run the
    body, how many instances in all; with a `thread_name`, the scratch is shared by the block's
    threads (core.kernel: `run_scoped(..., collective_axes=thread_name)`)."""
    wrapped = call.wrapped
    if not isinstance(wrapped, Wrapped) or "?" in wrapped.kwargs:
        return
    kw = wrapped.kwargs
    n = kw.get("num_threads", Const(None))
    threads = 1 if isinstance(n, Const) and n.value is None else as_int(n)
    grid, cluster = _count(kw.get("grid")), _count(kw.get("cluster"))
    if threads is None or threads < 1:
        return
    log.threads = threads
    if grid is not None and cluster is not None:
        log.instances = threads * grid * cluster
    name = kw.get("thread_name")
    scratch = kw.get("scratch_shapes")
    if isinstance(scratch, TupleVal):
        log.scratch = {s.span for s in scratch.items if isinstance(s, AllocSpec) and s.span is not None}
    if threads > 1 and isinstance(name, Const) and isinstance(name.value, str):
        log.thread_name = name.value
        if isinstance(scratch, TupleVal):
            log.shared = {s.span for s in scratch.items if isinstance(s, AllocSpec) and s.span is not None}


def _kernel_launch(name: str) -> None:
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        body, end = _body_end(call)
        H.kernel_enter(call.interp, _single_thread(call), ends_kernel=name == "plgpu.kernel()",
                       body_end=end)
        log = H.current(call.interp)
        if log is not None:
            log.body_func = body
            if name == "plgpu.kernel()":
                _instances(call, log)
        try:
            result = inner(call)
            log = H.finished(call.interp)
            if log is not None:
                # (imported here: the race analysis' modules only for a kernel that logged)
                from wgmma_lsp.hazards.report import report_hazards

                report_hazards(call.interp, log)
        finally:
            H.kernel_pop(call.interp)
        return result

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


# -- TMA copies and barriers ----------------------------------------------------------------
def _copy_in(call: Call) -> None:
    """`copy_gmem_to_smem(src, dst, barrier, ...)`: an async write of dst arriving on barrier."""
    src, dst, barrier = call.get(0, "src"), call.get(1, "dst"), call.get(2, "barrier")
    if not _smem(dst):
        # still an arrival on the barrier (or nothing, if JAX raised here): never proof of a count
        H.record(call.interp, "arrive", call.span, call.line, barrier=barrier,
                 barrier_text=_unparsed(call.node_of(2, "barrier")))
        log = H.current(call.interp)
        if log is not None and log.events and log.events[-1].span == call.span:
            log.events[-1].certain = False
        return
    collective = call.kwargs.get("collective_axes")
    H.record(call.interp, "load", call.span, call.line, ref=dst, barrier=barrier,
             gmem=src if _gmem(src) else None,
             barrier_span=call.span_of(2, "barrier"), barrier_text=_unparsed(call.node_of(2, "barrier")),
             prefix=H.call_func_prefix(call.node))
    if collective is not None and not (isinstance(collective, Const) and collective.value is None):
        log = H.current(call.interp)
        if log is not None and log.events:
            log.events[-1].certain = False  # a multicast: other blocks' barriers take part


def _copy_out(call: Call) -> None:
    """`copy_smem_to_gmem(src, dst, predicate=None, *, commit_group=True)`: an async read of
    src. A copy that does not close its bulk group, or may not run, is not one JAX's
    interpreter counts the same way: its events are possible only."""
    src = call.get(0, "src")
    if not _smem(src):
        return
    predicate = call.get(2, "predicate", Const(None))
    commit = call.kwargs.get("commit_group", Const(True))
    reduction = call.kwargs.get("reduction_op", Const(None))
    dst = call.get(1, "dst")
    gmem = isinstance(dst, RefVal) and dst.root().space in ("gmem", "any")
    H.record(call.interp, "store", call.span, call.line, ref=src, gmem=dst if gmem else None,
             prefix=H.call_func_prefix(call.node))
    if not (isinstance(predicate, Const) and predicate.value is None) \
            or not (isinstance(commit, Const) and commit.value is True) \
            or not (isinstance(reduction, Const) and reduction.value is None):  # a reduction is atomic
        log = H.current(call.interp)
        if log is not None and log.events:
            log.events[-1].certain = False  # still a copy in flight for the counts of waits


def _barrier_op(kind: str) -> Callable[[Call], None]:
    def fn(call: Call) -> None:
        H.record(call.interp, kind, call.span, call.line, barrier=call.get(0, "barrier"),
                 barrier_text=_unparsed(call.node_of(0, "barrier")))
    return fn


def _barrier_alloc(call: Call) -> Value:
    """`plgpu.Barrier(num_arrivals=n, ...)`: its `n` kept by the allocation's span (the ref a
    kernel gets for it has the span, not the count)."""
    spec = _barrier_model(call)
    if isinstance(spec, AllocSpec) and spec.span is not None and spec.arrivals is not None:
        table = getattr(call.interp, "_hazard_barrier_arrivals", None)
        if table is None:
            table = call.interp._hazard_barrier_arrivals = {}
        table[spec.span] = spec.arrivals
    return spec


@model("plgpu.commit_smem")
def _commit_smem(call: Call) -> Value:
    """`commit_smem()`: the thread's SMEM writes become visible to the async proxy (TMA)."""
    H.record(call.interp, "commit", call.span, call.line)
    return Const(None)


@model("plgpu.wait_smem_to_gmem")
def _wait_smem_to_gmem(call: Call) -> Value:
    """`wait_smem_to_gmem(n, wait_read_only=False)`: at most the `n` newest SMEM->GMEM copies of
    the thread stay in flight."""
    if count_rejected(call):
        return UNKNOWN  # JAX raises here
    n = as_int(call.get(0, "n", Const(None)))
    read_only = call.get(1, "wait_read_only", Const(False))
    # A read-only wait leaves the GMEM writes in flight; one that may be read-only counts for reads only.
    H.record(call.interp, "wait_store", call.span, call.line, n=n if n is not None and n >= 0 else None,
             read_only=not (isinstance(read_only, Const) and read_only.value is False),
             prefix=H.call_func_prefix(call.node))
    return Const(None)


# -- loads and stores through SMEM refs ---------------------------------------------------------


def _gmem_view(ref: RefVal, index: Value) -> Value:
    from wgmma_lsp.models.refs import ref_view

    return ref_view(ref, index, "at[...]")


def _ref_getitem(interp, ref, index, node):
    result = _getitem(interp, ref, index, node)
    if node is not None and _smem(ref):
        H.record(interp, "read", interp.span(node), node.lineno - 1, ref=ref, index=index)
    elif node is not None and _gmem(ref):
        H.record(interp, "gmem_read", interp.span(node), node.lineno - 1, gmem=_gmem_view(ref, index))
    return result


def _ref_setitem(interp, ref, index, value, target, value_node, aug) -> None:
    _setitem(interp, ref, index, value, target, value_node, aug)
    if target is not None and _smem(ref):
        if aug:
            H.record(interp, "read", interp.span(target), target.lineno - 1, ref=ref, index=index)
        H.record(interp, "write", interp.span(target), target.lineno - 1, ref=ref, index=index)
    elif target is not None and _gmem(ref):
        H.record(interp, "gmem_write", interp.span(target), target.lineno - 1, gmem=_gmem_view(ref, index))


def _load(idx_position: int | None) -> Callable[[Call], None]:
    def fn(call: Call) -> None:
        ref = call.get(0)
        if not _smem(ref):
            return
        index = call.get(idx_position, "idx") if idx_position is not None and call.has(idx_position, "idx") else None
        H.record(call.interp, "read", call.span, call.line, ref=ref, index=index)
    return fn


def _wgmma_reads(call: Call) -> None:
    """`wgmma(acc, a, b)`: the tensor cores read `b`, and `a` when it is a ref, from SMEM. The
    read starts at the call (it may go on until a `wgmma_wait`, which is not modelled: a read
    seen shorter than it is claims no race it does not have)."""
    for position, name in ((1, "a"), (2, "b")):
        ref = call.get(position, name)
        if _smem(ref):
            H.record(call.interp, "read", call.span_of(position, name), call.line, ref=ref)


# -- control flow that may not run ------------------------------------------------------------
def _maybe(name: str, decide: Callable[[Call], bool]) -> None:
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        with H.maybe(call.interp, decide(call)):
            return inner(call)

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


def _traced_condition(call: Call) -> bool:
    wrapped = call.wrapped
    cond = wrapped.kwargs.get("condition") if isinstance(wrapped, Wrapped) else None
    return not (isinstance(cond, Const) and isinstance(cond.value, bool))


def _steps(lower: Value | None, upper: Value | None, step: Value | None = None) -> range | None:
    """The values of the index of a loop with these bounds, when they are Python ints."""
    lo, hi = as_int(lower) if lower is not None else None, as_int(upper) if upper is not None else None
    st = as_int(step) if step is not None else 1
    if lo is None or hi is None or st is None or st <= 0:
        return None
    return range(lo, hi, st)


def _index_free(carry: Value | None) -> bool:
    """A loop carry that cannot hold a Python number the body would index with: the body's
    second run sees the same boxes as its first (the loop index itself is traced: unknown)."""
    if carry is None or isinstance(carry, Const):
        return carry is None or carry.value is None
    if isinstance(carry, TupleVal):
        return all(_index_free(x) for x in carry.items)
    return isinstance(carry, ArrayVal)


def _second_iteration(call: Call, start: int, trips: int, carry: Value | None) -> None:
    """The body of a loop that runs at least twice, traced once: its operations again, as its
    second step (which meets what the first left in flight: a copy out still reading, a read not
    committed before the next load). Only when nothing the body's boxes depend on changes."""
    log = H.current(call.interp)
    if log is None or trips < 2 or not _index_free(carry):
        return
    body = log.events[start:]
    if body and len(log.events) + len(body) <= H.MAX_EVENTS:
        log.events.extend(dataclasses.replace(e, data=dict(e.data)) for e in body)


_LOOPS = itertools.count(1)


def _unrolled(call: Call, log: H.KernelLog | None, steps: range | None, carry: Value | None) -> StepInt | None:
    """The index to give the body of a loop the log unrolls (hazards/unroll.py): bounds that are
    Python ints, at most `MAX_STEPS` steps, no loop already being unrolled around it, a carry that
    cannot hold a Python number the body would index with."""
    if log is None or log.opaque or log.unroll is not None or steps is None \
            or not 1 <= len(steps) <= unroll.MAX_STEPS or not _index_free(carry):
        return None
    return StepInt((), INT32, loop=next(_LOOPS), at=tuple(steps))


def _loop(name: str, steps: Callable[[Call], range | None], carry: Callable[[Call], Value | None]) -> None:
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        rng = steps(call)
        n = len(rng) if rng is not None else 0
        log = H.current(call.interp)
        start = len(log.events) if log is not None else 0
        index = _unrolled(call, log, rng, carry(call))
        if log is not None:
            log.loop_depth += 1
            if index is not None:
                log.unroll = (index.loop, n)
                loop_steps.offer(call.interp, index)
        try:
            with H.maybe(call.interp, n < 1):
                result = inner(call)
        finally:
            if log is not None:
                log.loop_depth -= 1
                if index is not None:
                    loop_steps.offer(call.interp, None)
                    log.unroll = None
        if index is not None and log is not None and unroll.expand(log, start, index.loop, n, H.MAX_EVENTS):
            return result
        _second_iteration(call, start, n, carry(call))
        return result

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


def _always(call: Call) -> bool:
    return True


def _threads(call: Call) -> bool:
    """`pl.core_map` / `plgpu.warp_map`: more threads run the body."""
    log = H.current(call.interp)
    if log is not None:
        log.single_thread = False
    return True


def _warp_mesh(call: Call) -> Value:
    """`plgpu.WarpMesh(axis_name=...)`: kept with its axis name, for `pl.core_map`."""
    return Wrapped("plgpu.WarpMesh", UNKNOWN, dict(call.kwargs), call.span)


def _core_map_mesh(call: Call) -> Value:
    result = _core_map_model(call)
    mesh = call.get(0, "mesh")
    axis = mesh.kwargs.get("axis_name") if isinstance(mesh, Wrapped) and mesh.api == "plgpu.WarpMesh" else None
    if isinstance(result, Wrapped) and isinstance(axis, Const) and isinstance(axis.value, str):
        result.kwargs["__hazard_warps__"] = axis  # kept for `pl.core_map(...)(body)`
    return result


def _core_map_apply_warps(call: Call) -> Value:
    """`pl.core_map(plgpu.WarpMesh(axis_name=...))` as the whole kernel: its warps are the kernel's
    threads (hazards/warps.py). Any other core_map: more threads run the body, which may not run."""
    axis = call.wrapped.kwargs.get("__hazard_warps__") if isinstance(call.wrapped, Wrapped) else None
    log = H.current(call.interp)
    if log is None or not isinstance(axis, Const) or not warps.enter(log, axis.value):
        _threads(call)
        with H.maybe(call.interp):
            return _core_map_apply(call)
    try:
        return _core_map_apply(call)
    finally:
        warps.leave(log)


def _axis_index(call: Call) -> Value:
    """`lax.axis_index(name)`: remembered, so that `pl.when(wg == k)` on the thread axis is known
    to run in thread k only."""
    result = _axis_index_model(call)
    log = H.current(call.interp)
    name = call.get(0, "axis_name")
    if log is not None and isinstance(name, Const) and isinstance(name.value, str):
        log.axis_values[id(result)] = (result, name.value)
    return result


def _thread_of(call: Call) -> int | None:
    """`pl.when(<the thread index> == k)` (either way round), k a Python int below num_threads:
    the thread that runs the body. The thread index is `lax.axis_index(<the kernel's thread
    axis>)` wherever it was made — bound to a name (`wg == 0`), written in the condition, returned
    by a function of the user's: the condition's value is a comparison `_axis_compare` saw."""
    log = H.current(call.interp)
    if log is None or log.thread_name is None:
        return None
    cond = call.get(0, "condition")
    compared = log.axis_compares.get(id(cond))
    if compared is not None and compared[0] is cond and compared[1] == log.thread_name \
            and 0 <= compared[2] < log.threads:
        return compared[2]
    return None


def _axis_compare(interp: Any, op: ast.cmpop, left: Value, right: Value, result: Value) -> None:
    """`lax.axis_index(name) == k` (either way round, k a Python int), wherever the axis index
    was made: the comparison's value is remembered (a fresh object: not a shared one)."""
    if not isinstance(op, ast.Eq) or isinstance(result, Const) or result is UNKNOWN:
        return
    log = H.current(interp)
    if log is None or not log.axis_values:
        return
    for axis, k in ((left, right), (right, left)):
        made = log.axis_values.get(id(axis))
        if made is not None and made[0] is axis and isinstance(k, Const) and type(k.value) is int:
            log.axis_compares[id(result)] = (result, made[1], k.value)
            return


def _pl_when_thread(call: Call) -> Value:
    result = _pl_when(call)
    k = _thread_of(call)
    if isinstance(result, Wrapped) and k is not None:
        result.kwargs["__hazard_thread__"] = Const(k)  # kept for `pl.when(...)(body)`
    return result


def _pl_when_apply_thread(call: Call) -> Value:
    """A `pl.when` on the thread index runs its body in that thread, for sure: its operations
    are that thread's. Any other traced condition may not hold: they are possible only."""
    k = call.wrapped.kwargs.get("__hazard_thread__") if isinstance(call.wrapped, Wrapped) else None
    log = H.current(call.interp)
    cond = call.wrapped.kwargs.get("condition") if isinstance(call.wrapped, Wrapped) else None
    steps = loop_steps.mask(cond, *log.unroll) if log is not None and log.unroll is not None else None
    if steps is not None and not isinstance(k, Const):
        # `pl.when(i + 2 < n)` in an unrolled loop: its operations run at the steps it holds at
        log.step_masks.append(steps)
        try:
            return _pl_when_apply(call)
        finally:
            log.step_masks.pop()
    if log is None or not isinstance(k, Const) or log.thread_role not in (None, k.value):
        with H.maybe(call.interp, _traced_condition(call) or isinstance(k, Const)):
            return _pl_when_apply(call)
    saved, log.thread_role = log.thread_role, k.value
    try:
        return _pl_when_apply(call)
    finally:
        log.thread_role = saved


def _pl_loop_bounds(call: Call) -> Value:
    result = _pl_loop(call)
    if isinstance(result, Wrapped):
        # kept with the decorator for `pl.loop(...)(body)`: how many times the body runs
        result.kwargs["__hazard_steps__"] = Const(_steps(call.get(0, "lower"), call.get(1, "upper"),
                                                         call.get(2, "step", Const(1))))
    return result


def _pl_loop_steps(call: Call) -> range | None:
    steps = call.wrapped.kwargs.get("__hazard_steps__") if isinstance(call.wrapped, Wrapped) else None
    return steps.value if isinstance(steps, Const) and isinstance(steps.value, range) else None


def _step_binary(name: str, keep: Callable[[Value, Value, Value], Value]) -> None:
    """`lax.rem(i, 2)`, `jnp.remainder(i, 3)`: the result keeps the loop's steps (loop_steps)."""
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        return keep(call.get(0), call.get(1), inner(call))

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


# -- what the log does not see into ---------------------------------------------------------------
def _opaque(name: str, why: str) -> None:
    if name in MODELS:
        _wrap(name, before=lambda call: H.make_opaque(call.interp, why))


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 10


def install() -> None:
    """Extend the models registered by other modules (called once by `registry.load_all`, after
    every model module was imported: importing this module changes no table)."""
    global _barrier_model, _getitem, _setitem, _axis_index_model, _pl_when, _pl_when_apply, _pl_loop, \
        _core_map_model, _core_map_apply
    _kernel_launch("plgpu.kernel()")
    _kernel_launch("pl.pallas_call()")
    if _axis_compare not in COMPARE_SITES:
        COMPARE_SITES.append(_axis_compare)
    _barrier_model = MODELS["plgpu.Barrier"]
    MODELS["plgpu.Barrier"] = _barrier_alloc
    _wrap("plgpu.copy_gmem_to_smem", after=_copy_in)
    _wrap("plgpu.copy_smem_to_gmem", after=_copy_out)
    _wrap("plgpu.barrier_wait", after=_barrier_op("wait"))
    _wrap("plgpu.barrier_arrive", after=_barrier_op("arrive"))
    _getitem = GETITEM["ref"]
    _setitem = SETITEM["ref"]
    GETITEM["ref"] = _ref_getitem
    SETITEM["ref"] = _ref_setitem
    _wrap("plgpu.wgmma", after=_wgmma_reads)
    _wrap("pl.load", after=_load(1))
    _wrap("plgpu.load", after=_load(1))
    _axis_index_model = MODELS["lax.axis_index"]
    for _name in ("lax.axis_index", "jax.lax.axis_index"):
        if MODELS.get(_name) is _axis_index_model:
            MODELS[_name] = _axis_index
    _pl_when = MODELS["pl.when"]
    _pl_when_apply = MODELS["pl.when()"]
    MODELS["pl.when"], MODELS["pl.when()"] = _pl_when_thread, _pl_when_apply_thread
    for _name in ("lax.cond", "lax.switch", "lax.while_loop", "lax.scan", "plgpu.nd_loop()",
                  "plgpu.dynamic_scheduling_loop()"):
        _maybe(_name, _always)
    _maybe("plgpu.warp_map", _threads)
    _core_map_model, _core_map_apply = MODELS["pl.core_map"], MODELS["pl.core_map()"]
    MODELS["pl.core_map"], MODELS["pl.core_map()"] = _core_map_mesh, _core_map_apply_warps
    MODELS.setdefault("plgpu.WarpMesh", _warp_mesh)
    _loop("lax.fori_loop", lambda call: _steps(call.get(0, "lower"), call.get(1, "upper")),
          lambda call: call.get(3, "init_val"))
    for _name, _keep in (("lax.rem", loop_steps.rem), ("jnp.remainder", loop_steps.remainder),
                         ("jnp.mod", loop_steps.remainder)):
        if _name in MODELS:
            _step_binary(_name, _keep)
    _pl_loop = MODELS["pl.loop"]
    MODELS["pl.loop"] = _pl_loop_bounds
    _loop("pl.loop()", _pl_loop_steps,
          lambda call: call.wrapped.kwargs.get("init_carry", Const(None)) if isinstance(call.wrapped, Wrapped) else UNKNOWN)
    for _name in ("plgpu.emit_pipeline()", "plgpu.emit_pipeline_warp_specialized()", "plgpu.pipeline_callback()"):
        _opaque(_name, "a pipeline's own copies and barriers")
    for _name in ("plgpu.tcgen05_mma", "plgpu.tcgen05_commit_arrive", "plgpu.async_copy_smem_to_tmem",
                  "plgpu.async_prefetch"):
        _opaque(_name, "tcgen05 operations arrive on barriers")

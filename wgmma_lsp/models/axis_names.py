"""WG113: axis names inside a `plgpu.kernel` body (interpret/axis_env.py keeps which are bound).

`plgpu.kernel(..., grid=, grid_names=, cluster=, cluster_names=, num_threads=, thread_name=)`
builds a `plgpu.Mesh` and traces the body under `core.extend_axis_env_nd(mesh.shape)`: the
grid's names, the cluster's, and the thread axis when there is one (mosaic_gpu/core.py,
`Mesh.shape`, the same in 0.10.2, 0.12.0.1 and 0.12.1). Inside, `lax.axis_index(name)` (and
`plgpu.nd_loop`, which calls it on its `collective_axes`) raise
`NameError: Found an unbound axis name: …` for a name nothing binds, `lax.axis_size(name)`
`NameError: unbound axis name: …` (jax/_src/lax/parallel.py `_check_axis_names`,
jax/_src/core.py `AxisEnv.axis_size`). A `pl.pallas_call` body is traced under its grid's names
when the grid is named (`pallas_call_axes`).

Reported only where every binding around the call is known (`axis_env.current()` is a set):
the kernel's names are constants of the right lengths, and the code around the kernel's launch
runs in a known context (not a function analysed with unknown callers)."""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import axis_env
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value
from wgmma_lsp.rules import unbound_axis_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def names_of(v: Value) -> tuple[str, ...] | None:
    """The axis names a value spells: one string, or a tuple/list of strings (None: not known)."""
    if isinstance(v, Const) and isinstance(v.value, str):
        return (v.value,)
    if isinstance(v, TupleVal) and not v.spoiled \
            and all(isinstance(i, Const) and isinstance(i.value, str) for i in v.items):
        return tuple(i.value for i in v.items)  # type: ignore[union-attr]
    return None


def _length(v: Value) -> int | None:
    if isinstance(v, TupleVal) and not v.spoiled:
        return len(v.items)
    return None


def kernel_axes(kw: dict[str, Value]) -> tuple[str, ...] | None:
    """The names a `plgpu.kernel`'s mesh binds (`Mesh.shape`), from its keywords; None when any
    is not known, or when JAX's `Mesh` would refuse them (then the body is never traced)."""
    if "?" in kw:
        return None
    names: list[str] = []
    for sizes, labels in (("grid", "grid_names"), ("cluster", "cluster_names")):
        size = kw.get(sizes, TupleVal(()))
        label = kw.get(labels, TupleVal(()))
        got = names_of(label) if isinstance(label, TupleVal) else None  # (a string is split)
        if got is None or _length(size) != len(got):
            return None
        names.extend(got)
    threads = kw.get("num_threads", Const(None))
    thread = kw.get("thread_name", Const(None))
    if not (isinstance(threads, Const) and isinstance(thread, Const)):
        return None
    if (threads.value is None) != (thread.value is None):
        return None  # JAX's Mesh raises
    if thread.value is not None:
        if not isinstance(thread.value, str):
            return None
        names.append(thread.value)
    return tuple(names)


def lowered_cluster_axes(kw: dict[str, Value]) -> tuple[str, ...] | None:
    """A `plgpu.kernel`'s cluster axis names as its lowering holds them (`_AxisNames.cluster`
    after `lower_jaxpr_to_module`'s `axis_names.reverse()`: last name first), from its keywords;
    None when not known (or when JAX's `Mesh` refuses the names)."""
    if kernel_axes(kw) is None:
        return None
    names = names_of(kw.get("cluster_names", TupleVal(())))
    return None if names is None else names[::-1]


def pallas_call_axes(kw: dict[str, Value]) -> tuple[str, ...] | None:
    """The names a `pl.pallas_call`'s grid binds while its body is traced: a grid of `(name,
    size)` pairs is named (`GridSpec.__init__` unzips it; `GridMapping.trace_env` binds the
    names, the same in 0.10.2, 0.12.0.1 and 0.12.1), any other grid binds none. None when the
    grid is not known (a `grid_spec=`, keywords not known)."""
    if "?" in kw or "grid_spec" in kw:
        return None
    grid = kw.get("grid", TupleVal(()))
    if isinstance(grid, Const) and (grid.value is None or type(grid.value) is int):
        return ()
    if not isinstance(grid, TupleVal) or grid.spoiled:
        return None
    if not grid.items or isinstance(grid.items[0], (Const, ArrayVal)):
        return ()  # sizes (`isinstance(grid[0], tuple)` is false)
    names: list[str] = []
    for item in grid.items:
        if not (isinstance(item, TupleVal) and not item.spoiled and len(item.items) == 2
                and isinstance(item.items[0], Const) and isinstance(item.items[0].value, str)):
            return None
        names.append(item.items[0].value)
    return tuple(names)


def unbound(call: Call, name: Value) -> str | None:
    """The name JAX finds unbound first at this call inside a kernel body, if surely one."""
    if not call.interp.kernel.inside:
        return None
    names = names_of(name)
    if names is None:
        return None
    return axis_env.unbound_name(names)


def _fix_data(call: Call, node: ast.expr | None, missing: str) -> dict[str, Any]:
    """What WG113's fix needs: where the missing name is spelled as a string literal in the
    argument `node` (one of a tuple's items, or the argument itself), and the names bound there."""
    if isinstance(node, (ast.Tuple, ast.List)):
        node = next((e for e in node.elts if isinstance(e, ast.Constant) and e.value == missing), None)
    bound = axis_env.current()
    if not (isinstance(node, ast.Constant) and node.value == missing) or bound is None:
        return {}
    return {"name_span": call.interp.span(node), "missing": missing, "bound": sorted(bound)}


def _fails(call: Call, name: Value, node: ast.expr | None, message: Callable[[str], str]) -> bool:
    """Reported, True, when the axis name(s) `name`, written as `node`, raise at this call."""
    missing = unbound(call, name)
    if missing is None:
        return False
    call.interp.report(unbound_axis_name.RULE, message(missing), call.span, call.line,
                       data=_fix_data(call, node, missing))
    return True


def axis_index_fails(call: Call) -> bool:
    """`lax.axis_index(axis_name)`: reported, True, when it raises."""
    return _fails(call, call.get(0, "axis_name"), call.node_of(0, "axis_name"), unbound_axis_name.index_message)


def nd_loop_fails(call: Call) -> bool:
    """`plgpu.nd_loop(grid, *, collective_axes)`: `lax.axis_index(collective_axes)` first thing."""
    return _fails(call, call.kwargs.get("collective_axes", UNKNOWN), call.kw_nodes.get("collective_axes"),
                  unbound_axis_name.index_message)


def axis_size_fails(call: Call) -> bool:
    """`lax.axis_size(axis_name)`: reported, True, when it raises."""
    return _fails(call, call.get(0, "axis_name"), call.node_of(0, "axis_name"), unbound_axis_name.size_message)
